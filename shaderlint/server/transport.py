"""The language server's framing layer: LSP base-protocol messages read from a byte stream, with bounds.

A message is a header block (``Name: value`` lines, ``Content-Length`` required, ended by an empty
line) and a body of exactly ``Content-Length`` bytes. pygls' own reader trusts the client: a huge
length allocates it (MemoryError), a wrong or missing one leaves the reader out of step with the
messages for good. :class:`FrameReader` instead

- bounds what it buffers: a header line is at most :data:`MAX_HEADER_LINE` bytes, a header block
  at most :data:`MAX_HEADER_LINES` lines, a body at most ``max_message_bytes`` (default
  :data:`DEFAULT_MAX_MESSAGE_BYTES`, ``shaderlint lsp --max-message-bytes``);
- turns every framing error (a line that is not a header, no ``Content-Length``, one that is not a
  non-negative number or is over the limit, a line or block too long) into a :class:`Frame` with an
  ``error`` (the server answers it with a JSON-RPC Parse error, id null) and then *resynchronises*:
  it discards bytes, without keeping them, up to the next ``Content-Length: N`` header line;
- notices a body shorter than its ``Content-Length``: the header of the next message shows up
  inside it. A header line (``Content-Length: N`` then a raw line break) cannot occur in a valid
  JSON body (JSON strings hold no raw line breaks, and there is no other place for letters), so a
  body containing one is broken for certain: it is reported as an error and reading resumes at
  that header, instead of the next messages being swallowed as the rest of the body. A body whose
  declared end falls inside the next header line (it ends with ``Content-Le``…) is rewound the
  same way.

The reader runs on its own thread (:func:`start_reader`), so that messages keep being read, and
running lints interrupted (``on_input``), while the event loop is busy with a handler.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

log = logging.getLogger(__name__)

#: Default bound on one message's body, in bytes (``shaderlint lsp --max-message-bytes``). A
#: didOpen of a document this large is JSON-escaped text of tens of MB; anything larger is
#: dropped with a Parse error (and a log message) instead of being read into memory.
DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
#: Longest header line accepted (``Content-Length: …`` and ``Content-Type: …`` are ~60 bytes).
MAX_HEADER_LINE = 4096
#: Most header lines in one block.
MAX_HEADER_LINES = 32
#: Bytes read from the stream at a time.
CHUNK = 64 * 1024
#: The reader stops reading ahead while this many bytes of messages wait for the event loop.
PENDING_LIMIT = 64 * 1024 * 1024

#: A complete ``Content-Length`` header line, anywhere (also inside a broken body).
_HEADER = re.compile(rb"content-length[ \t]{0,16}:[ \t]{0,16}(\d{1,20})[ \t]{0,16}\r?\n", re.I)
_HEADER_SPAN = 90  # longest match of _HEADER: overlap kept between scanned chunks
def _prefixes(word: bytes, tail: bytes) -> bytes:
    """A pattern matching every non-empty prefix of ``word`` + ``tail`` (``tail``: a pattern)."""
    pattern = tail
    for ch in reversed(word):
        pattern = b"(?:" + re.escape(bytes([ch])) + b"(?:" + pattern + b")?)"
    return pattern


#: The start of such a header line cut off at the end of a body ("Content-Le", "Content-Length: 1").
_HEADER_PREFIX = re.compile(
    _prefixes(b"content-length", rb"[ \t]{0,16}(?::[ \t]{0,16}\d{0,20}[ \t]{0,16}\r?)?") + rb"\Z", re.I)
_LINE = re.compile(rb"([!#$%&'*+\-.^_`|~0-9A-Za-z]+)[ \t]*:[ \t]*(.*?)[ \t]*\r?\n\Z", re.S)  # a header field line
_LENGTH = re.compile(rb"\d{1,20}")


class Frame(NamedTuple):
    """One message's body, or a framing error (``body`` None) the server answers with a Parse error."""

    body: bytes | None
    error: str | None = None


class FrameReader:
    """Reads :class:`Frame` s from a binary stream (see the module docstring). ``read`` returns None
    at the end of the stream."""

    def __init__(self, stream: Any, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        self.max_message_bytes = max_message_bytes
        self._buf = bytearray()
        self._pos = 0  # start of the unread bytes in _buf
        self._eof = False
        self._skipping = False  # after a framing error: discard up to the next Content-Length header
        self._block: int | None = None  # start of the header block being read (kept in the buffer)
        self._stream = stream  # (kept: a file object closes its descriptor when collected)
        fd = None
        try:
            fd = stream.fileno()
        except (AttributeError, OSError, ValueError):
            pass
        if fd is not None:  # unbuffered reads of what is there: no lock shared with the interpreter's stdin
            self._read = lambda n: os.read(fd, n)
        elif hasattr(stream, "read1"):
            self._read = stream.read1
        else:
            self._read = stream.read

    # ---- buffer ---------------------------------------------------------------------------------
    def _fill(self) -> bool:
        """Read more bytes; False at the end of the stream."""
        if self._eof:
            return False
        keep = self._pos if self._block is None else min(self._pos, self._block)
        if keep > CHUNK and keep * 2 > len(self._buf):
            del self._buf[:keep]
            self._pos -= keep
            if self._block is not None:
                self._block -= keep
        try:
            chunk = self._read(CHUNK)
        except (OSError, ValueError):  # closed under us
            chunk = b""
        if not chunk:
            self._eof = True
            return False
        self._buf += chunk
        return True

    def _available(self) -> int:
        return len(self._buf) - self._pos

    # ---- messages -------------------------------------------------------------------------------
    def read(self) -> Frame | None:
        if self._skipping and not self._resync():
            return None
        self._skipping = False
        return self._read_frame()

    def _fail(self, error: str) -> Frame:
        """A framing error in the header block being read: the next message is looked for from the
        block's second byte on (garbage written in front of a message leaves that message intact)."""
        if self._block is not None:
            self._pos, self._block = self._block + 1, None
        self._skipping = True
        log.warning("framing error: %s; skipping to the next Content-Length header", error)
        return Frame(None, error)

    def _line(self) -> bytes | None | str:
        """The next line (with its line break); None at the end of the stream; "long" for a line over
        MAX_HEADER_LINE bytes (left unread)."""
        seen = 0  # bytes after _pos already searched (offsets are relative: _fill may compact the buffer)
        while True:
            nl = self._buf.find(b"\n", self._pos + seen, self._pos + MAX_HEADER_LINE + 1)
            if nl >= 0:
                line = bytes(self._buf[self._pos:nl + 1])
                self._pos = nl + 1
                return line
            if self._available() > MAX_HEADER_LINE:
                return "long"
            seen = self._available()
            if not self._fill():
                return None

    def _read_frame(self) -> Frame | None:
        length: int | None = None
        lines = 0
        self._block = self._pos
        while True:
            line = self._line()
            if line is None:
                self._block = None
                return None
            if line == "long":
                return self._fail(f"a header line longer than {MAX_HEADER_LINE} bytes")
            assert isinstance(line, bytes)
            if line.strip(b"\r\n") == b"":
                if lines == 0:
                    self._block = self._pos
                    continue  # blank lines between messages: tolerated
                break
            lines += 1
            if lines > MAX_HEADER_LINES:
                return self._fail(f"more than {MAX_HEADER_LINES} header lines")
            m = _LINE.match(line)
            if m is None:
                return self._fail(f"not a header line: {_show(line)}")
            name = m.group(1).lower()
            if name != b"content-length" and _HEADER.search(line, 1):  # "xContent-Length: 5": garbage in front
                return self._fail(f"not a header line: {_show(line)}")
            if name == b"content-length":
                value = m.group(2)
                if not _LENGTH.fullmatch(value):
                    return self._fail(f"Content-Length is not a non-negative number: {_show(value)}")
                length = int(value)
                if length > self.max_message_bytes:
                    return self._fail(f"a message of {length} bytes, over the limit of {self.max_message_bytes} "
                                      f"(shaderlint lsp --max-message-bytes)")
        if length is None:
            return self._fail("a header block without Content-Length")
        self._block = None
        return self._body(length)

    def _body(self, length: int) -> Frame | None:
        scanned = 0  # bytes of the body searched for an embedded header (relative: _fill may compact)
        while self._available() < length:
            start = self._pos
            found = _HEADER.search(self._buf, start + max(0, scanned - _HEADER_SPAN), len(self._buf))
            if found is not None:
                return self._cut(start, found.start(), length)
            scanned = self._available()
            if not self._fill():
                return None
        start = self._pos
        end = start + length
        found = _HEADER.search(self._buf, start + max(0, scanned - _HEADER_SPAN), end)
        if found is None and length and self._buf[end - 1] not in b"}] \t\r\n":
            found = _HEADER_PREFIX.search(self._buf, max(start, end - _HEADER_SPAN), end)
        if found is not None:
            return self._cut(start, found.start(), length)
        body = bytes(self._buf[start:end])
        self._pos = end
        return Frame(body)

    def _cut(self, start: int, at: int, length: int) -> Frame:
        """The body that started at ``start`` holds the next message's header at ``at``: report it, go on there."""
        self._pos = at
        error = (f"the message body ends after {at - start} of its {length} bytes (Content-Length): "
                 f"the next message's header follows")
        log.warning("framing error: %s", error)
        return Frame(None, error)

    def _resync(self) -> bool:
        """Discard bytes up to the next ``Content-Length`` header line; False at the end of the stream."""
        dropped = 0
        while True:
            found = _HEADER.search(self._buf, self._pos)
            if found is not None:
                dropped += found.start() - self._pos
                self._pos = found.start()
                if dropped:
                    log.info("skipped %d bytes to the next message header", dropped)
                return True
            keep = max(self._pos, len(self._buf) - _HEADER_SPAN)  # a header may straddle two reads
            dropped += keep - self._pos
            del self._buf[:keep]
            self._pos = 0
            if not self._fill():
                return False


def _show(data: bytes, limit: int = 60) -> str:
    text = repr(bytes(data[:limit]))[2:-1]
    return text + ("…" if len(data) > limit else "")


class Reader:
    """A :class:`FrameReader` on its own thread: frames are handed to the event loop with
    ``loop.call_soon_threadsafe(deliver, frame)`` (None: the end of the stream), and ``on_input`` is
    called (on the reader thread) once per frame delivered. While more than :data:`PENDING_LIMIT`
    bytes of delivered frames are not yet handled (:meth:`done`), it stops reading (the client then
    blocks on a full pipe, which is the back-pressure the protocol has)."""

    def __init__(self, stream: Any, loop: Any, deliver: Callable[[Frame | None], None],
                 on_input: Callable[[], None] = lambda: None,
                 max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        self.frames = FrameReader(stream, max_message_bytes)
        self.loop = loop
        self.deliver = deliver
        self.on_input = on_input
        self._cond = threading.Condition()
        self.pending = 0  # frames delivered and not yet handled
        self._pending_bytes = 0
        self.stopped = False
        self.thread = threading.Thread(target=self._run, name="shaderlint-lsp-reader", daemon=True)

    def start(self) -> "Reader":
        self.thread.start()
        return self

    def stop(self) -> None:
        with self._cond:
            self.stopped = True
            self._cond.notify_all()

    def done(self, frame: Frame) -> None:
        """The event loop has handled ``frame``."""
        with self._cond:
            self.pending -= 1
            self._pending_bytes -= len(frame.body or b"")
            self._cond.notify_all()

    def _run(self) -> None:
        try:
            while not self.stopped:
                frame = self.frames.read()
                if frame is None:
                    break
                with self._cond:
                    self.pending += 1
                    self._pending_bytes += len(frame.body or b"")
                try:
                    self.loop.call_soon_threadsafe(self.deliver, frame)
                except RuntimeError:  # the loop is closed
                    return
                try:
                    self.on_input()
                except Exception:
                    log.exception("input callback failed")
                with self._cond:
                    while self._pending_bytes > PENDING_LIMIT and not self.stopped:
                        self._cond.wait(0.5)
        except Exception:
            log.exception("reading messages failed")
        try:
            self.loop.call_soon_threadsafe(self.deliver, None)
        except RuntimeError:
            pass
