"""SL001's message: what could not be read, where, and (for GLSL templates) why."""

from __future__ import annotations

from shaderlint.config import Settings
from shaderlint.engine import lint_source

SL001 = Settings(select=("SL001",))

VISPY_HOOK = b"""\
uniform vec4 u_color;
varying float v_size;
void main(void)
{
    <viewport.clipping>;
    float d = length(gl_PointCoord.xy - vec2(0.5)) * v_size;
    gl_FragColor = <paint>(d, u_color);
}
"""

SUBSTITUTION = b"""\
#version 450
layout(local_size_x = 64) in;
layout(binding = 0) buffer B { float x[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    x[i] = x[i] * ${scale};
}
"""

# A real syntax error in GLSL without placeholders, and comparisons that look like `<a.b>`.
PLAIN_ERROR = b"""\
uniform vec3 t;
vec3 forward(float x, float y, float z)
{ return vec3(x, y, z) + t); }
void main() {
    vec3 a = vec3(1.0);
    bool b = 0.0 < a.x && a.y > 1.0;  // `< a.x && a.y >` is no placeholder
    gl_FragColor = vec4(b ? 1.0 : 0.0);
}
"""


def _messages(data: bytes, path: str) -> list[str]:
    return [d.message for d in lint_source(path, data, SL001).diagnostics]


def test_vispy_hooks_say_the_file_is_a_template():
    msgs = _messages(VISPY_HOOK, "marker.frag")
    assert msgs, "a hook where an expression stands does not parse"
    # one report per template file, naming the placeholder, instead of one per unreadable region
    assert len(msgs) == 1 and "template placeholder '<viewport.clipping>' -- this file is a shader template" in msgs[0]


def test_dollar_substitution_says_the_file_is_a_template():
    msgs = _messages(SUBSTITUTION, "scale.comp")
    assert len(msgs) == 1 and "template placeholder '${scale}'" in msgs[0], msgs


def test_plain_syntax_error_gets_no_template_hint():
    msgs = _messages(PLAIN_ERROR, "translate.frag")
    assert msgs, "the unbalanced ')' is a real syntax error"
    assert not any("template" in m for m in msgs)


def test_cuda_template_arguments_never_read_as_placeholders():
    src = b"template <typename T> __global__ void k(T* p) { p[0] = static_cast<T>(1) + ; }\n"
    msgs = _messages(src, "k.cu")
    assert msgs and not any("template placeholder" in m for m in msgs)


# A header macro opening a block at file scope, which the front end cannot read without its header.
HEADER_MACRO = b"""\
#include "defs.h"

EXPORT_KERNELS_BEGIN(scale)
__global__ void k(float* a) { a[threadIdx.x] = 0.0f; }
"""

# The same name defined in the file, and a plain missing `;`: no header to name.
DEFINED_HERE = b"""\
#define EXPORT_KERNELS_BEGIN(x) namespace x {
EXPORT_KERNELS_BEGIN(scale)
__global__ void k(float* a) {
    int x = 1
    a[0] = x;
}
"""


def test_header_macro_is_named_as_missing_context():
    msgs = _messages(HEADER_MACRO, "k.cu")
    assert msgs and "`EXPORT_KERNELS_BEGIN` is a macro defined outside this file; add its header to include-dirs" in msgs[0], msgs


def test_no_header_named_for_a_macro_of_the_file_or_a_plain_error():
    msgs = _messages(DEFINED_HERE, "k.cu")
    assert msgs and not any("defined outside this file" in m for m in msgs), msgs
