#!/usr/bin/python3
"""slowloris.py HOST PORT N SECONDS - opens N connections to HOST:PORT that
never finish a request: each sends a TLS record header announcing 512 bytes
and then one byte of it every 2 s (so no inactivity timeout ends it), for at most
SECONDS.  Prints "open K" once K connections are up (those the server did
not refuse), and at the end "closed by the server: C" (connections it shut).
Bounded: N sockets, SECONDS seconds, loopback only (the caller's address).
"""
import socket
import sys
import time

host, port, n, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
if not host.startswith("127."):
    sys.exit("slowloris.py: loopback addresses only")
socks = []
for _ in range(n):
    try:
        s = socket.create_connection((host, port), timeout=2)
        s.sendall(b"\x16\x03\x01\x02\x00")  # a 512-byte TLS record follows, slowly
        s.setblocking(False)
        socks.append(s)
    except OSError:
        pass
print("open %d" % len(socks), flush=True)
end = time.monotonic() + secs
closed = set()
while time.monotonic() < end:
    time.sleep(2)
    for i, s in enumerate(socks):
        if i in closed:
            continue
        try:
            if s.recv(1) == b"":
                closed.add(i)
                continue
        except BlockingIOError:
            pass
        except OSError:
            closed.add(i)
            continue
        try:
            s.send(b"\x01")
        except OSError:
            closed.add(i)
print("closed by the server: %d" % len(closed), flush=True)
