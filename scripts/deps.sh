#!/usr/bin/env bash
# Check what tessera needs and install what is missing with apt-get (Debian/Ubuntu).
#   deps.sh build   compiler, libpng, libjpeg, zlib
#   deps.sh test    the above plus python3 with OpenCV and numpy (conformance tests, benchmark)
#   deps.sh fuzz    the build set plus clang with libFuzzer (tests/fuzz/run.sh) and valgrind
# The viewer's packages (GL, EGL, X11 headers; Xvfb and Mesa's EGL for its tests) are optional:
# when they cannot be installed tessera builds without the viewer.
# Without root (or sudo) it names the missing packages in one line and fails.
set -u
what=${1:-build}
missing=()
optional=()

have_header() { echo "#include <$1>" | ${CC:-cc} -E -x c - >/dev/null 2>&1; }

command -v ${CC:-cc} >/dev/null 2>&1 || missing+=(build-essential)
command -v make >/dev/null 2>&1 || missing+=(make)
have_header png.h || missing+=(libpng-dev)
have_header jpeglib.h || missing+=(libjpeg62-turbo-dev)
have_header zlib.h || missing+=(zlib1g-dev)
have_lib() { [ -e "$(${CC:-cc} -print-file-name=lib$1.so)" ]; }
have_header GL/gl.h || optional+=(libgl-dev)
have_header EGL/egl.h || optional+=(libegl-dev)
have_header X11/Xlib.h || optional+=(libx11-dev)
have_lib OpenGL || optional+=(libopengl-dev)
if [ "$what" = test ]; then
    py=${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3 )}
    command -v "$py" >/dev/null 2>&1 || missing+=(python3)
    "$py" -c 'import numpy' >/dev/null 2>&1 || missing+=(python3-numpy)
    "$py" -c 'import cv2' >/dev/null 2>&1 || missing+=(python3-opencv)
    command -v xvfb-run >/dev/null 2>&1 || optional+=(xvfb)
    command -v xauth >/dev/null 2>&1 || optional+=(xauth)
    ls /usr/share/glvnd/egl_vendor.d/*mesa*.json >/dev/null 2>&1 || optional+=(libegl-mesa0)
    compgen -G '/usr/lib/*/dri/swrast_dri.so' >/dev/null || compgen -G '/usr/lib/dri/swrast_dri.so' >/dev/null ||
        optional+=(libgl1-mesa-dri)
fi
if [ "$what" = fuzz ]; then
    # clang links -fsanitize=fuzzer only with the compiler-rt archives (libclang-rt-*-dev).
    fuzz_ok() {
        local d; d=$(mktemp -d)
        printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *p, size_t n) { return 0; }\n' >"$d/f.c"
        clang -fsanitize=fuzzer,address,undefined "$d/f.c" -o "$d/f" >/dev/null 2>&1; local rc=$?
        rm -rf "$d"; return $rc
    }
    if ! command -v clang >/dev/null 2>&1; then missing+=(clang libclang-rt-dev)
    elif ! fuzz_ok; then
        v=$(clang --version | sed -nE 's/.*clang version ([0-9]+).*/\1/p' | head -n1)
        missing+=(libclang-rt-${v:-14}-dev)
    fi
    command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
fi
[ ${#missing[@]} -eq 0 ] && [ ${#optional[@]} -eq 0 ] && exit 0

# Install with apt-get where we may (root or passwordless sudo); 0 when installed.
install() {
    [ $# -gt 0 ] || return 0
    command -v apt-get >/dev/null 2>&1 || return 1
    if [ "$(id -u)" = 0 ]; then sudo=""; elif sudo -n true 2>/dev/null; then sudo="sudo -n"; else return 1; fi
    echo "tessera: installing $* with apt-get" >&2
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get install -y -q --no-install-recommends "$@" >>/tmp/tessera-apt.log 2>&1 ||
        { $sudo apt-get update -q >>/tmp/tessera-apt.log 2>&1 &&
          $sudo apt-get install -y -q --no-install-recommends "$@" >>/tmp/tessera-apt.log 2>&1; }
}

if ! install "${missing[@]}"; then
    echo "tessera: missing packages: ${missing[*]} (install with: sudo apt-get install ${missing[*]}; log: /tmp/tessera-apt.log)" >&2
    exit 1
fi
# The viewer's packages: never fail the build for them.
install "${optional[@]}" ||
    echo "tessera: the viewer needs ${optional[*]} (sudo apt-get install ${optional[*]}); building or testing without it" >&2
exit 0
