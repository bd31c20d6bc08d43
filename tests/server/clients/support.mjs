// Black-box support for the client tests: a real `sinter serve` on 127.0.0.1 (a port the system
// chooses), the official `ollama` and `openai` npm clients (installed under tests/references by
// scripts/install-test-references.sh), and small helpers.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repo = path.resolve(here, '../../..');
export const shared = process.env.SINTER_SHARED || path.resolve(repo, '../shared');
export const storiesModel = path.join(shared, 'models/stories260K.gguf');
export const sinterBin = process.env.SINTER_BIN || path.join(repo, 'build/bin/sinter');

const references = createRequire(path.join(repo, 'tests/references/package.json'));
export const { Ollama } = references('ollama');
export const OpenAI = references('openai').default ?? references('openai');

export class Server {
  // Starts `sinter serve ARGS` and waits until /health answers 200.
  static async start(args) {
    const child = spawn(sinterBin, ['serve', ...args, '--host', '127.0.0.1', '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stderr.on('data', (data) => { log += data; });
    const url = await new Promise((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`sinter serve did not start: ${log}`)), 30000);
      child.stdout.on('data', (data) => {
        out += data;
        const match = /listening on (http:\/\/[^\s]+)/.exec(out);
        if (match) { clearTimeout(timer); resolve(match[1]); }
      });
      child.on('exit', (code) => reject(new Error(`sinter serve exited with ${code}: ${log}`)));
    });
    const server = new Server(child, url, () => log);
    await eventually(async () => (await fetch(`${url}/health`)).status === 200);
    return server;
  }

  constructor(child, url, log) {
    this.child = child;
    this.url = url;
    this.log = log;
    this.port = Number(new URL(url).port);
  }

  ollama() { return new Ollama({ host: this.url }); }
  openai() { return new OpenAI({ baseURL: `${this.url}/v1`, apiKey: 'unused', maxRetries: 0 }); }

  // A Prometheus sample's value (-1 when absent).
  async metric(sample) {
    const text = await (await fetch(`${this.url}/metrics`)).text();
    for (const line of text.split('\n')) {
      if (line.startsWith(sample + ' ')) return Number(line.slice(sample.length + 1));
    }
    return -1;
  }

  async stop() {
    if (this.child.exitCode !== null) return this.child.exitCode;
    const exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
    this.child.kill('SIGTERM');
    return exited;
  }
}

export async function eventually(condition, limitMs = 20000) {
  const deadline = Date.now() + limitMs;
  for (;;) {
    try {
      if (await condition()) return true;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
