// Drives `minfer serve` with the official OpenAI Node client.
// Run by internal/server's TestOpenAINodeClient, which builds the binary
// and sets MINFER_BIN and MINFER_MODEL; by hand:
//   MINFER_BIN=/path/to/minfer MINFER_MODEL=testdata/models/stories260K.gguf node --test
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import OpenAI from 'openai';

const bin = process.env.MINFER_BIN;
const model = process.env.MINFER_MODEL;
let server;
let baseURL;
let client;

before(async () => {
  assert.ok(bin && model, 'set MINFER_BIN and MINFER_MODEL');
  server = spawn(bin, ['serve', '-m', model, '--host', '127.0.0.1', '--port', '0', '--ctx', '256', '--threads', '1'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  baseURL = await new Promise((resolve, reject) => {
    let log = '';
    const timer = setTimeout(() => reject(new Error('minfer serve did not start:\n' + log)), 60000);
    server.stderr.on('data', (b) => {
      log += b;
      const m = /listening on (http:\/\/\S+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    server.on('exit', (code) => reject(new Error(`minfer serve exited with ${code}:\n${log}`)));
  });
  client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0 });
});

after(async () => {
  if (!server || server.exitCode !== null) return;
  const exited = new Promise((resolve) => server.on('exit', resolve));
  server.kill('SIGINT');
  const t = setTimeout(() => server.kill('SIGKILL'), 10000);
  await exited;
  clearTimeout(t);
});

const messages = [{ role: 'user', content: 'Once upon a time' }];

test('lists the model', async () => {
  const page = await client.models.list();
  const ids = page.data.map((m) => m.id);
  assert.deepEqual(ids, ['stories260K']);
  assert.equal(page.data[0].object, 'model');
});

test('chat completion, and a streamed one with the same text at temperature 0', async () => {
  const params = { model: 'stories260K', messages, max_tokens: 24, temperature: 0 };
  const full = await client.chat.completions.create(params);
  const text = full.choices[0].message.content;
  assert.equal(full.object, 'chat.completion');
  assert.equal(full.choices[0].message.role, 'assistant');
  assert.ok(text.length > 0, 'empty reply');
  assert.equal(full.choices[0].finish_reason, 'length');
  assert.equal(full.usage.completion_tokens, 24);
  assert.ok(full.usage.prompt_tokens > 0);
  assert.equal(full.usage.total_tokens, full.usage.prompt_tokens + 24);

  const stream = await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } });
  let streamed = '';
  let finish = null;
  let usage = null;
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    assert.equal(chunk.object, 'chat.completion.chunk');
    for (const c of chunk.choices) {
      streamed += c.delta.content ?? '';
      if (c.finish_reason) finish = c.finish_reason;
    }
    if (chunk.usage) usage = chunk.usage;
  }
  assert.ok(chunks > 3, `only ${chunks} chunks: not streamed`);
  assert.equal(streamed, text);
  assert.equal(finish, 'length');
  assert.equal(usage.completion_tokens, 24);
});

test('stop string ends the reply with finish_reason stop', async () => {
  const full = await client.chat.completions.create({ model: 'stories260K', messages, max_tokens: 40, temperature: 0 });
  const text = full.choices[0].message.content;
  const word = text.trim().split(/\s+/)[2];
  const cut = await client.chat.completions.create({ model: 'stories260K', messages, max_tokens: 40, temperature: 0, stop: [word] });
  assert.equal(cut.choices[0].finish_reason, 'stop');
  assert.equal(cut.choices[0].message.content, text.slice(0, text.indexOf(word)));
});

test('text completion', async () => {
  const c = await client.completions.create({ model: 'stories260K', prompt: 'Lily and Tom', max_tokens: 12, temperature: 0, seed: 1 });
  assert.equal(c.object, 'text_completion');
  assert.ok(c.choices[0].text.length > 0);
  assert.equal(c.choices[0].finish_reason, 'length');
  assert.equal(c.usage.completion_tokens, 12);
});

test('a client abort mid-stream, then a normal request', async () => {
  const controller = new AbortController();
  const stream = await client.chat.completions.create(
    { model: 'stories260K', messages: [{ role: 'user', content: 'The dog' }], max_tokens: 200, temperature: 0, stream: true },
    { signal: controller.signal },
  );
  let got = '';
  let aborted = false;
  try {
    for await (const chunk of stream) {
      got += chunk.choices[0]?.delta?.content ?? '';
      if (got.length > 5 && !aborted) {
        aborted = true;
        controller.abort();
      }
    }
  } catch (err) {
    // The client may end the iteration quietly or throw its abort error.
    assert.ok(err.name === 'AbortError' || err instanceof OpenAI.APIUserAbortError, `unexpected: ${err}`);
  }
  assert.ok(aborted, 'the stream ended before the abort');
  assert.ok(got.length > 5);
  const next = await client.chat.completions.create({ model: 'stories260K', messages, max_tokens: 8, temperature: 0 });
  assert.equal(next.choices[0].finish_reason, 'length');
  assert.ok(next.choices[0].message.content.length > 0);
  const health = await (await fetch(baseURL.replace(/\/v1$/, '/health'))).json();
  assert.equal(health.status, 'ok');
});

test('20 concurrent requests: each answered or a clean 429', async () => {
  const all = await Promise.allSettled(
    Array.from({ length: 20 }, (_, i) =>
      client.chat.completions.create({ model: 'stories260K', messages: [{ role: 'user', content: `Story ${i}:` }], max_tokens: 16, temperature: 0.8, seed: i }),
    ),
  );
  let ok = 0;
  let busy = 0;
  for (const r of all) {
    if (r.status === 'fulfilled') {
      ok++;
      assert.ok(r.value.choices[0].message.content.length > 0);
    } else {
      assert.ok(r.reason instanceof OpenAI.RateLimitError, `unexpected failure: ${r.reason}`);
      assert.equal(r.reason.status, 429);
      assert.ok(r.reason.headers.get('retry-after'), '429 without Retry-After');
      assert.equal(r.reason.error?.type, 'rate_limit_error');
      busy++;
    }
  }
  assert.equal(ok + busy, 20);
  assert.ok(ok >= 1, 'none answered');
});

async function post(path, body, headers = { 'Content-Type': 'application/json' }) {
  const resp = await fetch(baseURL + path, { method: 'POST', headers, body });
  const json = await resp.json();
  assert.ok(json.error && typeof json.error.message === 'string' && json.error.type, `not OpenAI's error shape: ${JSON.stringify(json)}`);
  return [resp.status, json.error];
}

test('bad JSON, wrong types and huge bodies: 400/413 in OpenAI error shape', async () => {
  assert.equal((await post('/chat/completions', '{"messages": ['))[0], 400);
  assert.equal((await post('/chat/completions', '{"messages": "hello"}'))[0], 400);
  const [st, err] = await post('/chat/completions', JSON.stringify({ messages, temperature: 'hot' }));
  assert.equal(st, 400);
  assert.equal(err.param, 'temperature');
  assert.equal((await post('/completions', JSON.stringify({ prompt: 42 })))[0], 400);
  const huge = JSON.stringify({ messages: [{ role: 'user', content: 'a'.repeat(5 << 20) }] });
  assert.equal((await post('/chat/completions', huge))[0], 413);

  // The client surfaces the same errors as typed exceptions.
  await assert.rejects(
    client.chat.completions.create({ model: 'stories260K', messages, max_tokens: 'many' }),
    (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && e.param === 'max_tokens',
  );
  await assert.rejects(
    client.chat.completions.create({ model: 'no-such-model', messages }),
    (e) => e instanceof OpenAI.NotFoundError && e.code === 'model_not_found',
  );
  // And the server still answers.
  const ok = await client.completions.create({ model: 'stories260K', prompt: 'Tom', max_tokens: 4, temperature: 0 });
  assert.equal(ok.usage.completion_tokens, 4);
});
