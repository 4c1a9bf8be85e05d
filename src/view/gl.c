/* GL contexts for the viewer: EGL off screen (device platform, Mesa surfaceless, default
 * display) and EGL on an X11 window; entry points beyond OpenGL 1.1 loaded with
 * eglGetProcAddress. Every EGL and GL call that can fail is checked. */
#include "gl.h"
#include "../core/internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef TSR_VIEW_X11
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#endif

/* Whether the space-separated extension list 'list' names 'ext'. */
static int tsr__has_ext(const char *list, const char *ext)
{
    size_t n = strlen(ext);
    for (const char *p = list; p && (p = strstr(p, ext)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0)) return 1;
    return 0;
}

/* A short text for an EGL error code. */
static const char *tsr__egl_error(void)
{
    static _Thread_local char buf[32];
    EGLint e = eglGetError();
    switch (e) {
    case EGL_SUCCESS: return "no EGL error";
    case EGL_NOT_INITIALIZED: return "EGL_NOT_INITIALIZED";
    case EGL_BAD_ACCESS: return "EGL_BAD_ACCESS";
    case EGL_BAD_ALLOC: return "EGL_BAD_ALLOC";
    case EGL_BAD_ATTRIBUTE: return "EGL_BAD_ATTRIBUTE";
    case EGL_BAD_CONFIG: return "EGL_BAD_CONFIG";
    case EGL_BAD_CONTEXT: return "EGL_BAD_CONTEXT";
    case EGL_BAD_DISPLAY: return "EGL_BAD_DISPLAY";
    case EGL_BAD_MATCH: return "EGL_BAD_MATCH";
    case EGL_BAD_NATIVE_WINDOW: return "EGL_BAD_NATIVE_WINDOW";
    case EGL_BAD_PARAMETER: return "EGL_BAD_PARAMETER";
    case EGL_BAD_SURFACE: return "EGL_BAD_SURFACE";
    }
    snprintf(buf, sizeof buf, "EGL error 0x%x", (unsigned)e);
    return buf;
}

tsr_status tsr__gl_check(const char *what)
{
    GLenum e = glGetError(), first = e;
    for (int i = 0; e != GL_NO_ERROR && i < 16; i++) e = glGetError();   /* drain */
    if (first == GL_NO_ERROR) return TSR_OK;
    return tsr__fail(TSR_E_DEVICE, "GL: %s failed (error 0x%04x)", what, (unsigned)first);
}

/* Load the entry points beyond 1.1 and check the context can do what the viewer needs
 * (buffer objects, framebuffer objects and blits: OpenGL 3.0 or ARB_framebuffer_object). */
static tsr_status tsr__gl_load(tsr__gl *g)
{
    const char *ver = (const char *)glGetString(GL_VERSION), *ren = (const char *)glGetString(GL_RENDERER);
    int major = ver ? atoi(ver) : 0;
    if (!ver) return tsr__fail(TSR_E_UNSUPPORTED, "GL: the context answers no GL_VERSION");
    snprintf(g->renderer, sizeof g->renderer, "%s", ren ? ren : "unknown renderer");
    if (major < 3) {
        const char *ext = (const char *)glGetString(GL_EXTENSIONS);
        if (!tsr__has_ext(ext, "GL_ARB_framebuffer_object") || !tsr__has_ext(ext, "GL_ARB_pixel_buffer_object"))
            return tsr__fail(TSR_E_UNSUPPORTED, "GL: %s (OpenGL %s) lacks framebuffer or pixel buffer objects",
                             g->renderer, ver);
    }
#define TSR_LOAD(field, name)                                                                       \
    do {                                                                                            \
        g->field = (__typeof__(g->field))eglGetProcAddress(name);                                  \
        if (!g->field) return tsr__fail(TSR_E_UNSUPPORTED, "GL: %s has no %s", g->renderer, name);  \
    } while (0)
    TSR_LOAD(GenBuffers, "glGenBuffers");
    TSR_LOAD(DeleteBuffers, "glDeleteBuffers");
    TSR_LOAD(BindBuffer, "glBindBuffer");
    TSR_LOAD(BufferData, "glBufferData");
    TSR_LOAD(GenFramebuffers, "glGenFramebuffers");
    TSR_LOAD(DeleteFramebuffers, "glDeleteFramebuffers");
    TSR_LOAD(BindFramebuffer, "glBindFramebuffer");
    TSR_LOAD(FramebufferTexture2D, "glFramebufferTexture2D");
    TSR_LOAD(FramebufferRenderbuffer, "glFramebufferRenderbuffer");
    TSR_LOAD(CheckFramebufferStatus, "glCheckFramebufferStatus");
    TSR_LOAD(GenRenderbuffers, "glGenRenderbuffers");
    TSR_LOAD(DeleteRenderbuffers, "glDeleteRenderbuffers");
    TSR_LOAD(BindRenderbuffer, "glBindRenderbuffer");
    TSR_LOAD(RenderbufferStorage, "glRenderbufferStorage");
    TSR_LOAD(BlitFramebuffer, "glBlitFramebuffer");
#undef TSR_LOAD
    return tsr__gl_check("context setup");
}

/* On an initialized display: bind desktop OpenGL, create a context and make it current without
 * a window (surfaceless where supported, else a 16x16 pbuffer). 'why' gets the failure. */
static int tsr__gl_context_offscreen(tsr__gl *g, char *why, size_t nwhy)
{
    const char *ext = eglQueryString(g->dpy, EGL_EXTENSIONS);
    EGLint cattr[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_RED_SIZE, 8,
                      EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8, EGL_NONE};
    EGLConfig cfg = NULL;
    EGLint n = 0;
    int surfaceless = tsr__has_ext(ext, "EGL_KHR_surfaceless_context");
    if (!eglBindAPI(EGL_OPENGL_API)) {
        snprintf(why, nwhy, "no desktop OpenGL (%s)", tsr__egl_error());
        return 0;
    }
    if (!eglChooseConfig(g->dpy, cattr, &cfg, 1, &n) || n < 1) {
        cfg = NULL;
        if (!surfaceless || !tsr__has_ext(ext, "EGL_KHR_no_config_context")) {
            snprintf(why, nwhy, "no pbuffer config for OpenGL");
            return 0;
        }
    }
    g->ctx = eglCreateContext(g->dpy, cfg ? cfg : (EGLConfig)0, EGL_NO_CONTEXT, NULL);
    if (g->ctx == EGL_NO_CONTEXT) {
        snprintf(why, nwhy, "eglCreateContext: %s", tsr__egl_error());
        return 0;
    }
    if (!surfaceless) {
        EGLint pattr[] = {EGL_WIDTH, 16, EGL_HEIGHT, 16, EGL_NONE};
        g->surf = cfg ? eglCreatePbufferSurface(g->dpy, cfg, pattr) : EGL_NO_SURFACE;
        if (g->surf == EGL_NO_SURFACE) {
            snprintf(why, nwhy, "eglCreatePbufferSurface: %s", tsr__egl_error());
            return 0;
        }
    }
    if (!eglMakeCurrent(g->dpy, g->surf, g->surf, g->ctx)) {
        snprintf(why, nwhy, "eglMakeCurrent: %s", tsr__egl_error());
        return 0;
    }
    return 1;
}

/* A context with nothing open and no CUDA device found (g's old contents are not read). */
static void tsr__gl_empty(tsr__gl *g)
{
    memset(g, 0, sizeof *g);
    g->dpy = EGL_NO_DISPLAY;
    g->ctx = EGL_NO_CONTEXT;
    g->surf = EGL_NO_SURFACE;
    g->cuda_device = -1;
}

/* Undo a failed attempt so the next one starts clean. */
static void tsr__gl_reset(tsr__gl *g)
{
    if (g->dpy != EGL_NO_DISPLAY) {
        eglMakeCurrent(g->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        if (g->surf != EGL_NO_SURFACE) eglDestroySurface(g->dpy, g->surf);
        if (g->ctx != EGL_NO_CONTEXT) eglDestroyContext(g->dpy, g->ctx);
        eglTerminate(g->dpy);
    }
    g->dpy = EGL_NO_DISPLAY;
    g->ctx = EGL_NO_CONTEXT;
    g->surf = EGL_NO_SURFACE;
}

/* Try one EGL display: initialize, make a context, load GL. Returns 1 on success. */
static int tsr__gl_try(tsr__gl *g, EGLDisplay dpy, const char *label, char *why, size_t nwhy)
{
    EGLint major, minor;
    char sub[200];
    tsr_status s;
    g->dpy = dpy;
    if (dpy == EGL_NO_DISPLAY) {
        snprintf(why, nwhy, "%s: no display", label);
        return 0;
    }
    if (!eglInitialize(dpy, &major, &minor)) {
        snprintf(why, nwhy, "%s: eglInitialize: %s", label, tsr__egl_error());
        g->dpy = EGL_NO_DISPLAY;
        return 0;
    }
    if (!tsr__gl_context_offscreen(g, sub, sizeof sub)) {
        snprintf(why, nwhy, "%s: %s", label, sub);
        tsr__gl_reset(g);
        return 0;
    }
    if ((s = tsr__gl_load(g))) {
        snprintf(why, nwhy, "%s: %s", label, tsr_last_error());
        tsr__gl_reset(g);
        return 0;
    }
    snprintf(g->platform, sizeof g->platform, "%s", label);
    return 1;
}

/* Try the EGL devices: those with a CUDA ordinal (NVIDIA) when nv is set, the others if not. */
static int tsr__gl_try_devices(tsr__gl *g, int nv, char *why, size_t nwhy)
{
    const char *cext = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    PFNEGLQUERYDEVICESEXTPROC query_devices;
    PFNEGLQUERYDEVICESTRINGEXTPROC device_string;
    PFNEGLQUERYDEVICEATTRIBEXTPROC device_attrib;
    PFNEGLGETPLATFORMDISPLAYEXTPROC platform_display;
    EGLDeviceEXT devs[16];
    EGLint n = 0;
    if (!tsr__has_ext(cext, "EGL_EXT_device_enumeration") && !tsr__has_ext(cext, "EGL_EXT_device_base")) {
        snprintf(why, nwhy, "EGL device platform: not offered by this EGL");
        return 0;
    }
    query_devices = (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
    device_string = (PFNEGLQUERYDEVICESTRINGEXTPROC)eglGetProcAddress("eglQueryDeviceStringEXT");
    device_attrib = (PFNEGLQUERYDEVICEATTRIBEXTPROC)eglGetProcAddress("eglQueryDeviceAttribEXT");
    platform_display = (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    if (!query_devices || !device_string || !platform_display || !query_devices(16, devs, &n) || n < 1) {
        snprintf(why, nwhy, "EGL device platform: no devices");
        return 0;
    }
    snprintf(why, nwhy, "EGL device platform: no %s device", nv ? "NVIDIA" : "other");
    for (int i = 0; i < n; i++) {
        const char *dext = device_string(devs[i], EGL_EXTENSIONS);
        EGLAttrib cuda = -1;
        int is_nv = tsr__has_ext(dext, "EGL_NV_device_cuda");
        char label[64];
        if (is_nv != nv) continue;
        if (is_nv && device_attrib && !device_attrib(devs[i], EGL_CUDA_DEVICE_NV, &cuda)) cuda = -1;
        snprintf(label, sizeof label, is_nv ? "EGL device %d (CUDA device %d)" : "EGL device %d", i, (int)cuda);
        if (tsr__gl_try(g, platform_display(EGL_PLATFORM_DEVICE_EXT, devs[i], NULL), label, why, nwhy)) {
            g->cuda_device = (int)cuda;
            return 1;
        }
    }
    return 0;
}

tsr_status tsr__gl_open_headless(tsr__gl *g)
{
    const char *force = getenv("TSR_VIEW_EGL"), *cext;
    char why[4][240] = {"", "", "", ""};
    PFNEGLGETPLATFORMDISPLAYEXTPROC platform_display;
    tsr__gl_empty(g);
    if (force && !*force) force = NULL;
    if (force && strcmp(force, "device") && strcmp(force, "surfaceless") && strcmp(force, "default"))
        return tsr__fail(TSR_E_ARG, "TSR_VIEW_EGL='%s' is not one of device|surfaceless|default", force);
    cext = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    platform_display = (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    if (!force || !strcmp(force, "device")) {
        if (tsr__gl_try_devices(g, 1, why[0], sizeof why[0])) return TSR_OK;
    }
    if (!force || !strcmp(force, "surfaceless")) {
        if (!tsr__has_ext(cext, "EGL_MESA_platform_surfaceless") || !platform_display)
            snprintf(why[1], sizeof why[1], "EGL surfaceless: not offered by this EGL");
        else if (tsr__gl_try(g, platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL),
                             "EGL surfaceless", why[1], sizeof why[1]))
            return TSR_OK;
    }
    if (!force || !strcmp(force, "device")) {
        if (tsr__gl_try_devices(g, 0, why[2], sizeof why[2])) return TSR_OK;
    }
    if (!force || !strcmp(force, "default")) {
        if (tsr__gl_try(g, eglGetDisplay(EGL_DEFAULT_DISPLAY), "EGL default display", why[3], sizeof why[3]))
            return TSR_OK;
    }
    return tsr__fail(TSR_E_UNSUPPORTED, "no off-screen OpenGL: %s%s%s%s%s%s%s (install Mesa's libegl1 libgl1-mesa-dri, "
                     "or the NVIDIA driver's EGL)",
                     why[0], *why[1] && *why[0] ? "; " : "", why[1], *why[2] ? "; " : "", why[2],
                     *why[3] ? "; " : "", why[3]);
}

#ifdef TSR_VIEW_X11
tsr_status tsr__gl_open_window(tsr__gl *g, int w, int h, const char *title)
{
    const char *cext, *denv = getenv("DISPLAY");
    PFNEGLGETPLATFORMDISPLAYEXTPROC platform_display;
    EGLint major, minor, n = 0, vid = 0;
    EGLint cattr[] = {EGL_SURFACE_TYPE, EGL_WINDOW_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_RED_SIZE, 8,
                      EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8, EGL_NONE};
    EGLConfig cfg;
    XVisualInfo tmpl, *vi;
    XSetWindowAttributes swa;
    int nvi = 0;
    tsr_status s;
    tsr__gl_empty(g);
    Display *xdpy = XOpenDisplay(NULL);
    g->xdpy = xdpy;
    if (!xdpy)
        return tsr__fail(TSR_E_UNSUPPORTED, "no display: %s (use --headless to render off screen)",
                         denv && *denv ? "cannot open the X display in DISPLAY" : "DISPLAY is not set");
    /* The screen's size comes through this one connection: a second one, opened and closed
     * first, would leave the server with no client for a moment, and an X server that resets
     * then (Xvfb, a bare X without -noreset) drops the window's connection while it resets. */
    if (w > DisplayWidth(xdpy, DefaultScreen(xdpy)) * 9 / 10) w = DisplayWidth(xdpy, DefaultScreen(xdpy)) * 9 / 10;
    if (h > DisplayHeight(xdpy, DefaultScreen(xdpy)) * 9 / 10) h = DisplayHeight(xdpy, DefaultScreen(xdpy)) * 9 / 10;
    cext = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    platform_display = (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    g->dpy = tsr__has_ext(cext, "EGL_EXT_platform_x11") && platform_display
                 ? platform_display(EGL_PLATFORM_X11_EXT, (void *)xdpy, NULL)
                 : eglGetDisplay((EGLNativeDisplayType)(void *)xdpy);
    if (g->dpy == EGL_NO_DISPLAY || !eglInitialize(g->dpy, &major, &minor)) {
        s = tsr__fail(TSR_E_UNSUPPORTED, "no OpenGL on this display: EGL on X11: %s (use --headless)", tsr__egl_error());
        g->dpy = EGL_NO_DISPLAY;
        tsr__gl_close(g);
        return s;
    }
    if (!eglBindAPI(EGL_OPENGL_API) || !eglChooseConfig(g->dpy, cattr, &cfg, 1, &n) || n < 1 ||
        !eglGetConfigAttrib(g->dpy, cfg, EGL_NATIVE_VISUAL_ID, &vid)) {
        s = tsr__fail(TSR_E_UNSUPPORTED, "no OpenGL window config on this display (%s)", tsr__egl_error());
        tsr__gl_close(g);
        return s;
    }
    tmpl.visualid = (VisualID)vid;
    vi = XGetVisualInfo(xdpy, VisualIDMask, &tmpl, &nvi);
    if (!vi || nvi < 1) {
        if (vi) XFree(vi);
        tsr__gl_close(g);
        return tsr__fail(TSR_E_UNSUPPORTED, "no X visual 0x%x for the OpenGL config", (unsigned)vid);
    }
    memset(&swa, 0, sizeof swa);
    swa.colormap = XCreateColormap(xdpy, RootWindow(xdpy, vi->screen), vi->visual, AllocNone);
    swa.event_mask = KeyPressMask | ButtonPressMask | ButtonReleaseMask | PointerMotionMask | StructureNotifyMask |
                     ExposureMask;
    g->xwin = (unsigned long)XCreateWindow(xdpy, RootWindow(xdpy, vi->screen), 0, 0, (unsigned)w, (unsigned)h, 0, vi->depth,
                            InputOutput, vi->visual, CWColormap | CWEventMask, &swa);
    XFree(vi);
    if (!g->xwin) {
        tsr__gl_close(g);
        return tsr__fail(TSR_E_UNSUPPORTED, "cannot create an X window");
    }
    XStoreName(xdpy, g->xwin, title);
    Atom wm = XInternAtom(xdpy, "WM_DELETE_WINDOW", False);
    g->wm_delete = wm;
    XSetWMProtocols(xdpy, g->xwin, &wm, 1);
    XMapWindow(xdpy, g->xwin);
    g->win_w = w;
    g->win_h = h;
    g->surf = eglCreateWindowSurface(g->dpy, cfg, (EGLNativeWindowType)g->xwin, NULL);
    if (g->surf == EGL_NO_SURFACE) {
        s = tsr__fail(TSR_E_UNSUPPORTED, "eglCreateWindowSurface: %s", tsr__egl_error());
        tsr__gl_close(g);
        return s;
    }
    g->ctx = eglCreateContext(g->dpy, cfg, EGL_NO_CONTEXT, NULL);
    if (g->ctx == EGL_NO_CONTEXT || !eglMakeCurrent(g->dpy, g->surf, g->surf, g->ctx)) {
        s = tsr__fail(TSR_E_UNSUPPORTED, "no OpenGL context on this display: %s", tsr__egl_error());
        tsr__gl_close(g);
        return s;
    }
    if ((s = tsr__gl_load(g))) {
        tsr__gl_close(g);
        return s;
    }
    snprintf(g->platform, sizeof g->platform, "EGL on X11 %s", DisplayString(xdpy));
    return TSR_OK;
}

#else

tsr_status tsr__gl_open_window(tsr__gl *g, int w, int h, const char *title)
{
    (void)w, (void)h, (void)title;
    tsr__gl_empty(g);
    return tsr__fail(TSR_E_UNSUPPORTED, "this build has no windows (install libx11-dev and rebuild); use --headless");
}
#endif

void tsr__gl_close(tsr__gl *g)
{
    if (g->dpy != EGL_NO_DISPLAY && g->dpy) {
        eglMakeCurrent(g->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        if (g->surf != EGL_NO_SURFACE) eglDestroySurface(g->dpy, g->surf);
        if (g->ctx != EGL_NO_CONTEXT) eglDestroyContext(g->dpy, g->ctx);
        /* An off-screen display stays initialized for the next session (the same handle comes
         * back from eglGetPlatformDisplay; the driver is not unloaded and reloaded each time).
         * A window's display goes with its X connection. */
        if (g->xdpy) eglTerminate(g->dpy);
        eglReleaseThread();
    }
#ifdef TSR_VIEW_X11
    if (g->xdpy) {
        if (g->xwin) XDestroyWindow((Display *)g->xdpy, (Window)g->xwin);
        XCloseDisplay((Display *)g->xdpy);
    }
#endif
    tsr__gl_empty(g);
}
