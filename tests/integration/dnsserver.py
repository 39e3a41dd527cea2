#!/usr/bin/env python3
"""A test resolver: answers every A query with ANSWER (IN A, TTL 5),
AAAA and others with no data, over UDP on ADDR:53, and logs each
queried name to LOG. Runs until killed; made for one test's network
namespace. Usage: dnsserver.py ADDR ANSWER LOG"""

import socket
import struct
import sys


def question(msg):
    """(name, qtype, end offset) of the first question."""
    labels, i = [], 12
    while msg[i]:
        n = msg[i]
        labels.append(msg[i + 1:i + 1 + n].decode("ascii", "replace"))
        i += 1 + n
    qtype = struct.unpack("!H", msg[i + 1:i + 3])[0]
    return ".".join(labels), qtype, i + 5


def answer(msg, ip):
    name, qtype, end = question(msg)
    flags = 0x8180  # response, recursion desired and available
    head = msg[:2] + struct.pack("!HHHHH", flags, 1, 1 if qtype == 1 else 0, 0, 0)
    out = head + msg[12:end]
    if qtype == 1:
        out += struct.pack("!HHHLH", 0xC00C, 1, 1, 5, 4) + socket.inet_aton(ip)
    return name, out


def main():
    addr, ip, log = sys.argv[1:4]
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, 53))
    with open(log, "a", buffering=1) as f:
        print("ready", flush=True)
        while True:
            msg, peer = s.recvfrom(512)
            try:
                name, out = answer(msg, ip)
            except (IndexError, struct.error):
                continue
            f.write(name + "\n")
            s.sendto(out, peer)


if __name__ == "__main__":
    main()
