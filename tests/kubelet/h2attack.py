"""Hand-written HTTP/2 frames over a unix socket, to attack a gRPC server the way a hostile
local client would (tests/integration/test_grpc_limits.py).

Nothing here speaks gRPC properly on purpose: frames are written raw (RFC 9113), header
blocks are HPACK literals without Huffman coding (RFC 7541 6.2.2), so each attack is a few
lines: rapid reset (HEADERS then RST_STREAM, over and over), a CONTINUATION flood (one header
block that never ends), many connections, a connection that never sends the preface.

  c = H2Conn(path); c.handshake(); c.headers(1, METHOD_HEADERS, end_headers=True); c.rst(1)
"""
import socket
import struct

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0, 1, 3, 4, 6, 7, 8, 9
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1
CANCEL = 8


def frame(ftype, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", stream) + payload


def _hpack_int(value, prefix_bits, first=0):
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out = [first | limit]
    value -= limit
    while value >= 128:
        out.append((value & 127) | 128)
        value >>= 7
    out.append(value)
    return bytes(out)


def literal(name, value):
    """One header as an HPACK 'literal without indexing, new name', no Huffman."""
    name, value = name.encode(), value.encode()
    return b"\x00" + _hpack_int(len(name), 7) + name + _hpack_int(len(value), 7) + value


def header_block(path, extra=()):
    hs = [(":method", "POST"), (":scheme", "http"), (":path", path), (":authority", "localhost"),
          ("content-type", "application/grpc"), ("te", "trailers")] + list(extra)
    return b"".join(literal(n, v) for n, v in hs)


class H2Conn:
    def __init__(self, path, timeout=5):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(timeout)
        self.s.connect(path)

    def send(self, data):
        self.s.sendall(data)

    def handshake(self):
        """Preface and an empty SETTINGS; the server's SETTINGS is acknowledged later."""
        self.send(PREFACE + frame(SETTINGS, 0, 0) + frame(SETTINGS, ACK, 0))

    def headers(self, stream, block, end_headers=True, end_stream=False):
        flags = (END_HEADERS if end_headers else 0) | (END_STREAM if end_stream else 0)
        self.send(frame(HEADERS, flags, stream, block))

    def continuation(self, stream, block, end_headers=False):
        self.send(frame(CONTINUATION, END_HEADERS if end_headers else 0, stream, block))

    def rst(self, stream, code=CANCEL):
        self.send(frame(RST_STREAM, 0, stream, struct.pack(">I", code)))

    def read_frames(self, limit=1 << 20):
        """Reads what the server sent so far (until a timeout or EOF): [(type, flags, stream,
        payload)], and whether the server closed the connection."""
        buf, closed = b"", False
        try:
            while len(buf) < limit:
                chunk = self.s.recv(65536)
                if not chunk:
                    closed = True
                    break
                buf += chunk
        except (socket.timeout, BlockingIOError):
            pass
        except (ConnectionResetError, BrokenPipeError):
            closed = True
        frames = []
        while len(buf) >= 9:
            n = int.from_bytes(buf[:3], "big")
            if len(buf) < 9 + n:
                break
            frames.append((buf[3], buf[4], int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF, buf[9:9 + n]))
            buf = buf[9 + n:]
        return frames, closed

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass


def server_settings(frames):
    """The SETTINGS the server announced: {id: value}."""
    out = {}
    for t, flags, _, payload in frames:
        if t == SETTINGS and not flags & ACK:
            for i in range(0, len(payload) - 5, 6):
                ident, value = struct.unpack(">HI", payload[i:i + 6])
                out[ident] = value
    return out


SETTINGS_MAX_CONCURRENT_STREAMS = 3
SETTINGS_MAX_HEADER_LIST_SIZE = 6
