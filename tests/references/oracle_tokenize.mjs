// llama.cpp's tokenization of many texts in one process (the shared oracle tokenizes one text per
// call, at 1-5 s each). Uses the node-llama-cpp that ../shared/oracle/run installed, with the
// same call: model.tokenize(text, true) = special tokens parsed, no BOS added.
//   node oracle_tokenize.mjs MODEL.gguf TEXTS.json > IDS.json
// TEXTS.json is a JSON array of strings; the output is a JSON array of id arrays. The model is
// loaded vocabulary-only, so a GGUF holding just a tokenizer (plus the few llama.* keys llama.cpp
// reads first) works too.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {pathToFileURL} from "node:url";

const [modelPath, textsPath] = process.argv.slice(2);
if (!modelPath || !textsPath) {
    console.error("usage: node oracle_tokenize.mjs MODEL.gguf TEXTS.json");
    process.exit(2);
}
const cache = process.env.ORACLE_HOME ||
    path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "reference-oracle");
const entry = path.join(cache, "node_modules", "node-llama-cpp", "dist", "index.js");
if (!fs.existsSync(entry)) {
    console.error(`node-llama-cpp is not installed at ${cache}; run ../shared/oracle/run once first`);
    process.exit(3);
}
const {getLlama} = await import(pathToFileURL(entry).href);
const texts = JSON.parse(fs.readFileSync(textsPath, "utf8"));
const llama = await getLlama({gpu: false, logLevel: "error", build: "never"});
const model = await llama.loadModel({modelPath, vocabOnly: true});
const out = texts.map(text => Array.from(model.tokenize(text, true)));
await new Promise(done => process.stdout.write(JSON.stringify(out) + "\n", done));
process.exit(0);
