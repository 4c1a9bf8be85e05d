/* GL contexts for the viewer (EGL for windows and off screen) and the GL entry points beyond
 * OpenGL 1.1, loaded at run time. Internal to src/view. */
#ifndef TSR_VIEW_GL_H
#define TSR_VIEW_GL_H

#include "tessera.h"
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <GL/glext.h>

typedef struct tsr__gl {
    EGLDisplay dpy;
    EGLContext ctx;
    EGLSurface surf;           /* window surface, a small pbuffer, or EGL_NO_SURFACE */
    void *xdpy;                /* window mode only (X11 Display *, Window, Atom): builds without */
    unsigned long xwin;        /* X11 headers (TSR_VIEW_X11 undefined) are headless only */
    unsigned long wm_delete;
    int win_w, win_h;          /* window mode: the window's size */
    int cuda_device;           /* CUDA ordinal of the EGL device, or -1 when unknown */
    char platform[64];         /* "EGL device (NVIDIA ...)", "EGL surfaceless", "EGL on X11"... */
    char renderer[128];
    /* OpenGL 1.5 / 3.0 entry points */
    PFNGLGENBUFFERSPROC GenBuffers;
    PFNGLDELETEBUFFERSPROC DeleteBuffers;
    PFNGLBINDBUFFERPROC BindBuffer;
    PFNGLBUFFERDATAPROC BufferData;
    PFNGLGENFRAMEBUFFERSPROC GenFramebuffers;
    PFNGLDELETEFRAMEBUFFERSPROC DeleteFramebuffers;
    PFNGLBINDFRAMEBUFFERPROC BindFramebuffer;
    PFNGLFRAMEBUFFERTEXTURE2DPROC FramebufferTexture2D;
    PFNGLFRAMEBUFFERRENDERBUFFERPROC FramebufferRenderbuffer;
    PFNGLCHECKFRAMEBUFFERSTATUSPROC CheckFramebufferStatus;
    PFNGLGENRENDERBUFFERSPROC GenRenderbuffers;
    PFNGLDELETERENDERBUFFERSPROC DeleteRenderbuffers;
    PFNGLBINDRENDERBUFFERPROC BindRenderbuffer;
    PFNGLRENDERBUFFERSTORAGEPROC RenderbufferStorage;
    PFNGLBLITFRAMEBUFFERPROC BlitFramebuffer;
} tsr__gl;

/* Make an off-screen context current: EGL device platform (NVIDIA devices first), then Mesa's
 * surfaceless platform, then the default display (TSR_VIEW_EGL=device|surfaceless|default
 * picks one). Fails with TSR_E_UNSUPPORTED and one line naming what each attempt said. */
tsr_status tsr__gl_open_headless(tsr__gl *g);
/* Open an X11 window of w x h, or of at most 9/10 of the screen each way, with an EGL context
 * current on it; win_w and win_h say the size made. TSR_E_UNSUPPORTED when there is no display
 * or no usable GL on it, or the build has no X11. */
tsr_status tsr__gl_open_window(tsr__gl *g, int w, int h, const char *title);
/* Destroy the context and surfaces tsr__gl_open_* made (an off-screen EGL display stays
 * initialized for reuse); safe on a zeroed struct. */
void tsr__gl_close(tsr__gl *g);
/* Fail with TSR_E_DEVICE naming 'what' if glGetError reports an error (all are drained). */
tsr_status tsr__gl_check(const char *what);

/* CUDA-GL interop (src/view/interop.cu; only in CUDA builds). A registered pixel buffer is an
 * opaque handle. Every call fails with TSR_E_DEVICE and the CUDA message. */
tsr_status tsr__view_cuda_select(int cuda_device);
tsr_status tsr__view_pbo_register(GLuint pbo, void **res);
tsr_status tsr__view_pbo_map(void *res, void **ptr, size_t *size, void *stream);
tsr_status tsr__view_pbo_unmap(void *res, void *stream);
void tsr__view_pbo_unregister(void *res);

#endif
