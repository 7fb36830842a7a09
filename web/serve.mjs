// SPDX-License-Identifier: MIT
// Serves the built page with nginx (a real static server: Range requests, correct MIME types).
//   node web/serve.mjs [--port 8080] [--host 127.0.0.1] [--root build/web] [--models DIR]
// runs nginx in the foreground until Ctrl-C and prints the URL. The browser tests import startNginx().
// The configuration is written to build/nginx/ (or a temporary folder); nginx runs with -p/-c/-e so it
// touches nothing of the system's nginx.
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const NGINX = "/usr/sbin/nginx";
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** A TCP port that was free a moment ago. */
export function freePort(host = "127.0.0.1") {
    return new Promise((resolve, reject) => {
        const server = net.createServer();
        server.on("error", reject);
        server.listen(0, host, () => {
            const { port } = server.address();
            server.close(() => resolve(port));
        });
    });
}

/**
 * nginx.conf text: `root` at /, and each [urlPrefix, dir, directives] of `aliases` at /urlPrefix/ (directives:
 * optional extra nginx lines for that location, e.g. "limit_rate 100k;").
 */
export function nginxConfig({ dir, host, port, root, aliases = [] }) {
    const q = (p) => `"${p.replace(/["\\]/g, "\\$&")}"`;
    const user = process.getuid?.() === 0 ? "user root;\n" : "";
    const locations = aliases
        .map(
            ([prefix, target, directives = ""]) =>
                `        location /${prefix}/ {\n` +
                `            alias ${q(`${path.resolve(target)}/`)};\n` +
                `            ${directives}\n` +
                "        }\n",
        )
        .join("");
    return `# written by web/serve.mjs
${user}worker_processes 1;
daemon off;
pid ${q(path.join(dir, "nginx.pid"))};
error_log ${q(path.join(dir, "error.log"))} warn;
events { worker_connections 256; }
http {
    types {
        text/html html;
        text/css css;
        text/javascript js mjs;
        application/json json map;
        application/wasm wasm;
        image/svg+xml svg;
        image/png png;
    }
    default_type application/octet-stream;
    charset utf-8;
    charset_types text/css text/javascript application/json;
    access_log off;
    sendfile on;
    client_body_temp_path ${q(path.join(dir, "client_body"))};
    proxy_temp_path ${q(path.join(dir, "proxy"))};
    fastcgi_temp_path ${q(path.join(dir, "fastcgi"))};
    uwsgi_temp_path ${q(path.join(dir, "uwsgi"))};
    scgi_temp_path ${q(path.join(dir, "scgi"))};
    server {
        listen ${host}:${port};
        root ${q(path.resolve(root))};
        index index.html;
        # Models may also be read by pages of other origins; they need Content-Range and Content-Length.
        add_header Access-Control-Allow-Origin "*" always;
        add_header Access-Control-Expose-Headers "Content-Range, Content-Length, Accept-Ranges, ETag" always;
        add_header Cache-Control "no-cache" always;
${locations}    }
}
`;
}

async function waitUntilServing(url, child, timeoutMs = 10000) {
    const started = Date.now();
    for (;;) {
        if (child.exitCode !== null) throw new Error(`nginx exited with status ${child.exitCode}`);
        try {
            const response = await fetch(url);
            await response.arrayBuffer();
            return;
        } catch {
            if (Date.now() - started > timeoutMs) throw new Error(`nginx did not answer at ${url}`);
            await new Promise((r) => setTimeout(r, 50));
        }
    }
}

/**
 * Starts nginx serving `root` (and `aliases`) on a free port (or `port`); resolves to {url, stop()}.
 * dir: where the configuration, pid and log go (default: a fresh temporary folder).
 */
export async function startNginx({ root, aliases = [], host = "127.0.0.1", port, dir } = {}) {
    const temporary = dir === undefined;
    dir ??= await mkdtemp(path.join(os.tmpdir(), "ws-nginx-"));
    await mkdir(dir, { recursive: true });
    for (let attempt = 0; ; ++attempt) {
        const p = port ?? (await freePort(host));
        const conf = path.join(dir, "nginx.conf");
        await writeFile(conf, nginxConfig({ dir, host, port: p, root, aliases }));
        const child = spawn(NGINX, ["-p", dir, "-c", conf, "-e", path.join(dir, "error.log")], {
            stdio: ["ignore", "inherit", "inherit"],
        });
        const url = `http://${host}:${p}/`;
        try {
            await waitUntilServing(url, child);
        } catch (e) {
            child.kill("SIGTERM");
            if (port === undefined && attempt < 3) continue; // the free port was taken meanwhile
            throw e;
        }
        return {
            url,
            dir,
            child,
            stop: async () => {
                if (child.exitCode === null) {
                    await new Promise((resolve) => {
                        child.once("exit", resolve);
                        child.kill("SIGTERM");
                    });
                }
                if (temporary) await rm(dir, { recursive: true, force: true });
            },
        };
    }
}

if (import.meta.url === `file://${process.argv[1]}`) {
    const { values } = parseArgs({
        options: {
            port: { type: "string", default: "8080" },
            host: { type: "string", default: "127.0.0.1" },
            root: { type: "string", default: path.join(repoRoot, "build", "web") },
            models: { type: "string" },
        },
    });
    const server = await startNginx({
        root: values.root,
        host: values.host,
        port: Number(values.port),
        dir: path.join(repoRoot, "build", "nginx"),
        aliases: values.models ? [["models", values.models]] : [],
    });
    console.log(
        `weightstream: serving ${path.relative(repoRoot, values.root) || values.root} at ${server.url} ` +
            "(nginx; Ctrl-C stops it)",
    );
    let stopping = false;
    const stop = async () => {
        stopping = true;
        await server.stop();
        process.exit(0);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
    server.child.on("exit", (code) => {
        if (stopping) return;
        console.error(`weightstream: nginx exited (${code})`);
        process.exit(1);
    });
}
