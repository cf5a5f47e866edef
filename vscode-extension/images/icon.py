"""Draws icon.png (128 x 128): a threadgroup as a 4 x 4 grid of threads, one flagged.

Run `python images/icon.py` in vscode-extension/ to regenerate it; the output is
byte-for-byte reproducible (PNG written with zlib and struct only).
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

SIZE = 128
BACKGROUND = (0x1B, 0x26, 0x33)
THREAD = (0x3F, 0xB9, 0x9A)
FLAGGED = (0xF2, 0xA3, 0x2E)
CELL, GAP, MARGIN = 22, 6, 17  # 4 cells + 3 gaps + 2 margins = 128
RADIUS = 18                     # rounded corners of the background


def pixel(x: int, y: int) -> tuple[int, int, int, int]:
    # outside the rounded square: transparent
    cx = min(max(x, RADIUS), SIZE - 1 - RADIUS)
    cy = min(max(y, RADIUS), SIZE - 1 - RADIUS)
    if (x - cx) ** 2 + (y - cy) ** 2 > RADIUS ** 2:
        return (0, 0, 0, 0)
    col, row = divmod(x - MARGIN, CELL + GAP), divmod(y - MARGIN, CELL + GAP)
    if x >= MARGIN and y >= MARGIN and col[0] < 4 and row[0] < 4 and col[1] < CELL and row[1] < CELL:
        colour = FLAGGED if (col[0], row[0]) == (2, 1) else THREAD
        return (*colour, 255)
    return (*BACKGROUND, 255)


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png() -> bytes:
    rows = b"".join(b"\0" + bytes(c for x in range(SIZE) for c in pixel(x, y)) for y in range(SIZE))
    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9))
            + chunk(b"IEND", b""))


if __name__ == "__main__":
    Path(__file__).with_name("icon.png").write_bytes(png())
