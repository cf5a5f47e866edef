"""The project context in the editor: header macros, and open dependents re-linted when a header changes."""

from __future__ import annotations

from tests.server.conftest import change, codes, open_doc, wait_diagnostics

KERNEL = """\
#include "cfg.h"
__global__ void scale(int *out, const int *in, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
#if USE_DIV
        out[i] = in[i] / n;
#endif
    }
}
"""


async def test_a_header_edit_relints_the_open_files_including_it(client, tmp_path):
    (tmp_path / "cfg.h").write_text("#define USE_DIV 0\n")
    (tmp_path / "scale.cu").write_text(KERNEL)
    uri = (tmp_path / "scale.cu").as_uri()
    open_doc(client, uri, KERNEL)
    assert codes(await wait_diagnostics(client, uri)) == []  # the branch is dead with the header's macro
    header = (tmp_path / "cfg.h").as_uri()
    open_doc(client, header, "#define USE_DIV 0\n")
    await wait_diagnostics(client, header)
    change(client, header, 2, ((0, 16, 0, 17), "1"))  # not saved: the editor's text counts
    diags = await wait_diagnostics(client, uri, lambda d: codes(d) == ["SL201"])
    assert diags[0].range.start.line == 5
