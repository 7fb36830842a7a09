#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An HTTP server that misbehaves on purpose, for the CLI's URL tests (tests/cli_http_test.cpp).

Serves the files of --root at /MODE/NAME, with Range (one range), ETag, Last-Modified and If-Range as nginx
does, except where MODE says otherwise:
  plain      no fault
  drop       a response of more than 2048 bytes sends half its body, then closes the connection (once per
             path and range start, so a resumed request makes progress)
  busy       the first 2 requests of each path answer 503
  limit      the first request of each path answers 429 with Retry-After: 1
  norange    Range is ignored: every answer is 200 with the whole file
  changing   after the first request of a path, NAME.v2 is served under its name (another ETag and size);
             If-Range is honoured (a stale one answers 200, the whole new file)
  changing-tag  the same, but If-Range is ignored (a 206 of the new file: the client must see the ETag)
  stall      the first ranged response of each path sends half its body, then nothing for 30 s (the client's
             --timeout ends it; the connection then closes)
  trickle    every ranged response sends its body at 2 bytes a second (a stall at more than 1 byte/s)
  trickle-head  every ranged response sends its status line and headers at 2 bytes a second
  cap        every ranged response is a valid 206 of at most its first 4096 bytes (the true total in
             Content-Range): the client must ask again for the rest
  gzip       every ranged response is its bytes gzip-compressed, with Content-Encoding: gzip (not asked for)
  loop       302 to itself, forever
  tofile     302 to file:///etc/passwd
  redirect   302 to /plain/NAME on the same host
  offhost    302 to /plain/NAME on "localhost" (another host name for the same server)
Every request is logged to --log as one JSON line: method, path, host, range, if_range, authorization,
x_test (the X-Test header), status, bytes (body bytes it sends), time; a line is written before its
response, so it is there once the client has the response. The port is written to --port-file.
"""
import argparse
import email.utils
import gzip
import json
import os
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
COUNTS = {}
DROPPED = set()


def count(path):
    with LOCK:
        COUNTS[path] = COUNTS.get(path, 0) + 1
        return COUNTS[path]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self, status, sent):
        entry = {
            "method": self.command,
            "path": self.path,
            "host": self.headers.get("Host", ""),
            "range": self.headers.get("Range"),
            "if_range": self.headers.get("If-Range"),
            "authorization": self.headers.get("Authorization"),
            "x_test": self.headers.get("X-Test"),
            "status": status,
            "bytes": sent,
            "time": time.time(),
        }
        with LOCK, open(self.server.log_path, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def plain(self, status, headers=(), body=b""):
        # Logged before the response goes: the client may have it all and exit (or follow it) at once.
        self.record(status, len(body))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        m = re.match(r"^/([a-z-]+)/([^?#]+)", self.path)
        if not m:
            return self.plain(404)
        mode, name = m.group(1), m.group(2)
        n = count(self.path)
        if mode == "redirect":
            return self.plain(302, [("Location", "/plain/" + name)])
        if mode == "loop":
            return self.plain(302, [("Location", "/loop/" + name)])
        if mode == "tofile":
            return self.plain(302, [("Location", "file:///etc/passwd")])
        if mode == "offhost":
            port = self.server.server_address[1]
            return self.plain(302, [("Location", "http://localhost:%d/plain/%s" % (port, name))])
        if mode == "busy" and n <= 2:
            return self.plain(503)
        if mode == "limit" and n <= 1:
            return self.plain(429, [("Retry-After", "1")])
        file = os.path.join(self.server.root, name)
        if mode in ("changing", "changing-tag") and n > 1 and os.path.exists(file + ".v2"):
            file += ".v2"
        if not os.path.isfile(file):
            return self.plain(404)
        with open(file, "rb") as f:
            data = f.read()
        st = os.stat(file)
        etag = '"%x-%x"' % (int(st.st_mtime_ns), st.st_size)
        last_modified = email.utils.formatdate(st.st_mtime, usegmt=True)
        validators = [("ETag", etag), ("Last-Modified", last_modified), ("Accept-Ranges", "bytes")]
        wanted = self.headers.get("Range")
        if_range = self.headers.get("If-Range")
        if mode == "norange" or wanted is None:
            return self.send_body(200, validators, data, 0, len(data), mode)
        if if_range is not None and mode != "changing-tag" and if_range not in (etag, last_modified):
            return self.send_body(200, validators, data, 0, len(data), mode)
        r = re.match(r"^bytes=(\d+)-(\d*)$", wanted.strip())
        if not r:
            return self.send_body(200, validators, data, 0, len(data), mode)
        start = int(r.group(1))
        end = min(int(r.group(2)) + 1 if r.group(2) else len(data), len(data))
        if start >= len(data):
            return self.plain(416, validators + [("Content-Range", "bytes */%d" % len(data))])
        if mode == "cap":
            end = min(end, start + 4096)
        if mode == "gzip":
            body = gzip.compress(data[start:end])
            headers = validators + [
                ("Content-Range", "bytes %d-%d/%d" % (start, end - 1, len(data))),
                ("Content-Encoding", "gzip"),
            ]
            return self.plain(206, headers, body)
        headers = validators + [("Content-Range", "bytes %d-%d/%d" % (start, end - 1, len(data)))]
        return self.send_body(206, headers, data, start, end, mode)

    def send_body(self, status, headers, data, start, end, mode):
        key = (self.path, start)
        dropping = mode == "drop" and end - start > 2048 and key not in DROPPED
        stalling = mode == "stall" and status == 206 and count(("stall", self.path)) == 1
        half = (end - start) // 2
        self.record(status, half if dropping or stalling else end - start)
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(end - start))
        if mode == "trickle-head":
            head = b"".join(self._headers_buffer) + b"\r\n"
            self._headers_buffer = []
            return self.trickle(head)
        self.end_headers()
        if mode == "trickle" and status == 206:
            return self.trickle(data[start:end])
        if dropping or stalling:
            DROPPED.add(key)
            self.wfile.write(data[start : start + half])
            self.wfile.flush()
            if stalling:
                time.sleep(30)
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        try:
            self.wfile.write(data[start:end])
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def trickle(self, data):
        """Sends data 2 bytes a second, until it is sent or the client hangs up."""
        self.close_connection = True
        try:
            for i in range(0, len(data), 2):
                self.wfile.write(data[i : i + 2])
                self.wfile.flush()
                time.sleep(1)
        except (BrokenPipeError, ConnectionResetError):
            pass


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that hangs up (as the CLI does once it has its bytes) is no error here


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    args = parser.parse_args()
    server = Server(("127.0.0.1", 0), Handler)
    server.root = args.root
    server.log_path = args.log
    open(args.log, "w").close()
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
