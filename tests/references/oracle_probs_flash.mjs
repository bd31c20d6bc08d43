// The oracle's `probs` (../shared/oracle/oracle.mjs) with llama.cpp's flash attention on.
//   node oracle_probs_flash.mjs MODEL IDS_CSV  -> the same JSON as `oracle.mjs probs MODEL IDS_CSV`
//
// Why: node-llama-cpp turns flash attention off by default for a model whose key and value heads
// differ in size (GgufInsights.flashAttentionSupported, a rule older than latent attention), so
// every DeepSeek-V2/V3 file runs llama.cpp's other attention path under the oracle. llama.cpp
// itself resolves its default ("auto") to flash attention on the CPU: llama-cli, llama-server and
// the native build of ../shared/native-reference all use it. The other path rounds Q and the
// softmax weights to F16 for its products with the F16 cache; flash attention on a whole prompt
// keeps them in F32, as sinter does. On a quantized file that rounding alone moves the oracle by a
// KL of ~1e-4 per position from native llama.cpp (docs/NUMERICS.md).
//
// It runs the oracle's own installation (the node-llama-cpp package ../shared/oracle/run installs
// into its cache, located as that script locates it), so it answers from the same llama.cpp build:
// through the mirror beside this script (oracle-without-amx/, made by
// scripts/install-test-references.sh, run with node --preserve-symlinks) when it exists, which
// leaves out the CPU backend's AMX variant. On a CPU with AMX, llama.cpp puts Q8_0/Q4_0 weights
// in AMX buffers, and latent attention with flash attention then has a node no backend takes
// (GGML_ASSERT(*cur_backend_id != -1), an abort); the AVX-512 variant computes the same products.
import {existsSync} from "node:fs";
import {homedir} from "node:os";
import {dirname, join} from "node:path";
import {fileURLToPath, pathToFileURL} from "node:url";

const [model, idsCsv] = process.argv.slice(2);
const mirror = join(dirname(fileURLToPath(import.meta.url)), "oracle-without-amx");
const cache = process.env.ORACLE_HOME ||
    (existsSync(join(mirror, "node_modules/node-llama-cpp")) ? mirror
        : join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "reference-oracle"));
const {getLlama} = await import(pathToFileURL(join(cache, "node_modules/node-llama-cpp/dist/index.js")).href);
const threads = Number(process.env.ORACLE_THREADS || 2);
const llama = await getLlama({gpu: false, logLevel: "error", build: "never"});
const m = await llama.loadModel({modelPath: model});
const plain = {temperature: 1, topK: 0, topP: 1, minP: 0};
const toks = idsCsv.split(",").map(Number);
const ctx = await m.createContext(
    {contextSize: Math.max(256, toks.length + 8), threads, batchSize: Math.max(toks.length, 1), flashAttention: true});
const res = await ctx.getSequence().controlledEvaluate(
    toks.map(t => [t, {generateNext: {probabilities: true, options: plain}}]));
const text = JSON.stringify(res.map(r => Array.from(r.next.probabilities.entries())));
// stdout to a pipe is asynchronous: exit only once everything is written
await new Promise(done => process.stdout.write(text + "\n", done));
