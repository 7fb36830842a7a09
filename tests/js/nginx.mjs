// SPDX-License-Identifier: MIT
// A real nginx for the HTTP tests, started on free localhost ports with a config in a temporary folder. It
// serves tests/data at /, the shared corpus at /shared/, files a test writes at /generated/, and for the
// browser tests the package (wasm/js) at /pkg/ and tests/js at /tests/: once with Range support, once with
// `max_ranges 0;` (every request answered 200 with the whole file; also under /norange/ on every server, for
// pages that must stay on one origin), and twice more for cross-origin pages:
// with CORS headers that expose Content-Range, and with CORS headers that do not. Its access log records, per
// request, the test's operation id (header X-WS-Op), the status, $bytes_sent and $body_bytes_sent.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

import { repoRoot, sharedTestData, testData } from "./helpers.mjs";

export const nginxPath =
    ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"].find((p) => existsSync(p)) ?? null;

function freePort() {
    return new Promise((resolve, reject) => {
        const server = net.createServer();
        server.on("error", reject);
        server.listen(0, "127.0.0.1", () => {
            const { port } = server.address();
            server.close(() => resolve(port));
        });
    });
}

async function waitForPort(port, child, log) {
    for (let i = 0; i < 200; ++i) {
        if (child.exitCode !== null)
            throw new Error(`nginx exited with ${child.exitCode}: ${readFileSync(log, "utf8")}`);
        const open = await new Promise((resolve) => {
            const socket = net.connect(port, "127.0.0.1", () => {
                socket.destroy();
                resolve(true);
            });
            socket.on("error", () => resolve(false));
        });
        if (open) return;
        await sleep(25);
    }
    throw new Error(`nginx did not listen on ${port}`);
}

export async function startNginx() {
    const dir = mkdtempSync(path.join(tmpdir(), "ws-nginx-"));
    for (const sub of ["body", "proxy", "fastcgi", "uwsgi", "scgi"]) mkdirSync(path.join(dir, sub));
    const rangePort = await freePort();
    const noRangePort = await freePort();
    const corsPort = await freePort();
    const corsHiddenPort = await freePort();
    const accessLog = path.join(dir, "access.log");
    const errorLog = path.join(dir, "error.log");
    writeFileSync(accessLog, "");
    const generated = path.join(dir, "generated");
    mkdirSync(generated);
    const shared = existsSync(sharedTestData) ? `location /shared/ { alias ${sharedTestData}/; }` : "";
    const noRangeShared = existsSync(sharedTestData)
        ? `location /norange/shared/ { alias ${sharedTestData}/; max_ranges 0; }`
        : "";
    const server = (port, extra) => `
    server {
        listen 127.0.0.1:${port};
        root ${testData};
        ${extra}
        ${shared}
        location /generated/ { alias ${generated}/; }
        location /norange/ { alias ${testData}/; max_ranges 0; }
        ${noRangeShared}
        location /norange/generated/ { alias ${generated}/; max_ranges 0; }
        location /pkg/ { alias ${path.join(repoRoot, "wasm/js")}/; }
        location /tests/ { alias ${path.join(repoRoot, "tests/js")}/; }
    }`;
    // A preflight (a Range header that is not a single simple range) is answered here; every answer allows
    // any origin to send Range, and exposes Content-Range only when `expose` is set.
    const cors = (expose) => `
        if ($request_method = OPTIONS) { return 204; }
        add_header Access-Control-Allow-Origin "*" always;
        add_header Access-Control-Allow-Headers "Range, X-WS-Op" always;
        ${expose ? 'add_header Access-Control-Expose-Headers "Content-Range, Content-Length" always;' : ""}`;
    const config = `
daemon off;
master_process off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${errorLog} warn;
events { worker_connections 256; }
http {
    default_type application/octet-stream;
    log_format ws '$http_x_ws_op $status $bytes_sent $body_bytes_sent "$http_range"';
    access_log ${accessLog} ws;
    client_body_temp_path ${dir}/body;
    proxy_temp_path ${dir}/proxy;
    fastcgi_temp_path ${dir}/fastcgi;
    uwsgi_temp_path ${dir}/uwsgi;
    scgi_temp_path ${dir}/scgi;
    sendfile on;
    keepalive_timeout 30s;
    types {
        text/html html;
        text/javascript js mjs;
        application/wasm wasm;
        application/json json;
    }
    ${server(rangePort, "")}
    ${server(noRangePort, "max_ranges 0;")}
    ${server(corsPort, cors(true))}
    ${server(corsHiddenPort, cors(false))}
}
`;
    const conf = path.join(dir, "nginx.conf");
    writeFileSync(conf, config);
    const child = spawn(nginxPath, ["-p", dir, "-c", conf, "-e", errorLog], { stdio: "ignore" });
    await waitForPort(rangePort, child, errorLog);
    await waitForPort(noRangePort, child, errorLog);
    await waitForPort(corsPort, child, errorLog);
    await waitForPort(corsHiddenPort, child, errorLog);

    let opCounter = 0;
    return {
        /** Files written here are served at /generated/. */
        generatedDir: generated,
        rangeBase: `http://127.0.0.1:${rangePort}`,
        noRangeBase: `http://127.0.0.1:${noRangePort}`,
        /** Other origins than rangeBase: CORS allowed with Content-Range exposed, and without it exposed. */
        corsBase: `http://127.0.0.1:${corsPort}`,
        corsHiddenBase: `http://127.0.0.1:${corsHiddenPort}`,

        /** The URL path of a corpus file. */
        urlPath(file) {
            const rel = path.relative(testData, file);
            if (!rel.startsWith("..")) return `/${rel.split(path.sep).join("/")}`;
            return `/shared/${path.relative(sharedTestData, file).split(path.sep).join("/")}`;
        },

        /**
         * A fetch that tags every request with the current operation id and counts requests per operation
         * and requests in flight; `op(name)` starts a new operation and returns its id.
         */
        tracker() {
            const t = {
                current: "none",
                requests: new Map(),
                urls: [],
                inFlight: 0,
                maxInFlight: 0,
                op() {
                    t.current = `op${++opCounter}`;
                    t.requests.set(t.current, 0);
                    return t.current;
                },
                fetch: async (url, init = {}) => {
                    const headers = new Headers(init.headers);
                    headers.set("X-WS-Op", t.current);
                    t.requests.set(t.current, (t.requests.get(t.current) ?? 0) + 1);
                    t.urls.push(String(url));
                    t.inFlight += 1;
                    t.maxInFlight = Math.max(t.maxInFlight, t.inFlight);
                    try {
                        const response = await fetch(url, { ...init, headers });
                        if (!response.body) return response;
                        // Count a request as in flight until its body is finished or cancelled.
                        let done = false;
                        const finish = () => {
                            if (!done) {
                                done = true;
                                t.inFlight -= 1;
                            }
                        };
                        const reader = response.body.getReader();
                        const body = new ReadableStream({
                            async pull(controller) {
                                try {
                                    const { done: end, value } = await reader.read();
                                    if (end) {
                                        finish();
                                        controller.close();
                                    } else {
                                        controller.enqueue(value);
                                    }
                                } catch (e) {
                                    finish();
                                    controller.error(e);
                                }
                            },
                            cancel(reason) {
                                finish();
                                return reader.cancel(reason);
                            },
                        });
                        return new Response(body, {
                            status: response.status,
                            statusText: response.statusText,
                            headers: response.headers,
                        });
                    } catch (e) {
                        t.inFlight -= 1;
                        throw e;
                    }
                },
            };
            return t;
        },

        /**
         * The log lines of operation `op` once there are `count` of them (nginx logs a request when it is
         * done with it): [{status, bytesSent, bodyBytesSent, range}].
         */
        async served(op, count) {
            for (let i = 0; ; ++i) {
                const lines = readFileSync(accessLog, "utf8")
                    .split("\n")
                    .filter((l) => l.startsWith(`${op} `));
                if (lines.length >= count || i > 400) {
                    return lines.map((l) => {
                        const [, status, bytesSent, bodyBytesSent, range] = /^\S+ (\d+) (\d+) (\d+) "(.*)"$/.exec(l);
                        return {
                            status: Number(status),
                            bytesSent: Number(bytesSent),
                            bodyBytesSent: Number(bodyBytesSent),
                            range,
                        };
                    });
                }
                await sleep(10);
            }
        },

        async stop() {
            if (child.exitCode === null) {
                child.kill("SIGTERM");
                await new Promise((resolve) => child.once("exit", resolve));
            }
            rmSync(dir, { recursive: true, force: true });
        },
    };
}
