// Tool calling through the official OpenAI Node client.
// Run by internal/server's TestOpenAINodeClientTools, which serves a
// scripted engine (replies in the Hermes format, parsed as a local model's
// are: `Let me check.` then a get_weather call for Paris; a conversation
// ending in a tool result is answered "NAME (call ID) said: RESULT") and
// sets MINFER_TOOLS_URL to its /v1 address.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const baseURL = process.env.MINFER_TOOLS_URL;
assert.ok(baseURL, 'set MINFER_TOOLS_URL (TestOpenAINodeClientTools does)');
const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0 });

const tools = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Weather in a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
  {
    type: 'function',
    function: { name: 'add', parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } } },
  },
];
const question = [{ role: 'user', content: 'Weather in Paris?' }];

function assertWeatherCall(call) {
  assert.equal(call.type, 'function');
  assert.ok(typeof call.id === 'string' && call.id.length > 0, `call id ${call.id}`);
  assert.equal(call.function.name, 'get_weather');
  assert.deepEqual(JSON.parse(call.function.arguments), { city: 'Paris' });
}

test('tools and tool_choice "auto": message.tool_calls, finish_reason "tool_calls"', async () => {
  const c = await client.chat.completions.create({ model: 'm', messages: question, tools, tool_choice: 'auto' });
  const choice = c.choices[0];
  assert.equal(choice.finish_reason, 'tool_calls');
  assert.equal(choice.message.role, 'assistant');
  assert.equal(choice.message.content, 'Let me check.');
  assert.equal(choice.message.tool_calls.length, 1);
  assertWeatherCall(choice.message.tool_calls[0]);
});

test('tool_choice "required" and a named function are accepted', async () => {
  for (const tool_choice of ['required', { type: 'function', function: { name: 'get_weather' } }]) {
    const c = await client.chat.completions.create({ model: 'm', messages: question, tools, tool_choice });
    assert.equal(c.choices[0].finish_reason, 'tool_calls', JSON.stringify(tool_choice));
    assertWeatherCall(c.choices[0].message.tool_calls[0]);
  }
});

test('a named function that is not among the tools is a 400 on tool_choice', async () => {
  await assert.rejects(
    client.chat.completions.create({ model: 'm', messages: question, tools, tool_choice: { type: 'function', function: { name: 'nope' } } }),
    (err) => err instanceof OpenAI.BadRequestError && err.status === 400 && err.param === 'tool_choice',
  );
});

test('streamed: delta.tool_calls assembled by the client (stream helper and raw chunks)', async () => {
  const stream = client.chat.completions.stream({ model: 'm', messages: question, tools });
  const done = [];
  let text = '';
  stream.on('content.delta', ({ delta }) => (text += delta));
  stream.on('tool_calls.function.arguments.done', (e) => done.push(e));
  const final = await stream.finalChatCompletion();
  const choice = final.choices[0];
  assert.equal(choice.finish_reason, 'tool_calls');
  assert.equal(choice.message.tool_calls.length, 1);
  assertWeatherCall(choice.message.tool_calls[0]);
  assert.equal(text.trim(), 'Let me check.');
  assert.equal(done.length, 1);
  assert.equal(done[0].name, 'get_weather');
  assert.deepEqual(done[0].parsed_arguments ?? JSON.parse(done[0].arguments), { city: 'Paris' });

  // The same with stream: true, chunk by chunk.
  const chunks = await client.chat.completions.create({ model: 'm', messages: question, tools, stream: true });
  const calls = [];
  let finish = null;
  let raw = '';
  for await (const chunk of chunks) {
    const c = chunk.choices[0];
    if (!c) continue;
    raw += c.delta.content ?? '';
    for (const d of c.delta.tool_calls ?? []) {
      calls[d.index] ??= { id: '', type: '', function: { name: '', arguments: '' } };
      const acc = calls[d.index];
      if (d.id) acc.id = d.id;
      if (d.type) acc.type = d.type;
      acc.function.name += d.function?.name ?? '';
      acc.function.arguments += d.function?.arguments ?? '';
    }
    finish = c.finish_reason ?? finish;
  }
  assert.equal(finish, 'tool_calls');
  assert.equal(calls.length, 1);
  assertWeatherCall(calls[0]);
  assert.ok(!raw.includes('tool_call'), `the call's markup leaked into the text: ${raw}`);
});

test('round trip: the assistant tool_calls and the tool result sent back', async () => {
  const first = await client.chat.completions.create({ model: 'm', messages: question, tools });
  const call = first.choices[0].message.tool_calls[0];
  const messages = [
    ...question,
    first.choices[0].message,
    { role: 'tool', tool_call_id: call.id, content: JSON.stringify({ temperature: 21 }) },
  ];
  const second = await client.chat.completions.create({ model: 'm', messages, tools });
  assert.equal(second.choices[0].finish_reason, 'stop');
  assert.equal(second.choices[0].message.content, `get_weather (call ${call.id}) said: {"temperature":21}`);
  assert.ok(!second.choices[0].message.tool_calls?.length);
});

test('round trip run by the client: runTools calls the function and sends its result', async () => {
  const seen = [];
  const runner = client.chat.completions.runTools({
    model: 'm',
    messages: question,
    tools: [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          parameters: tools[0].function.parameters,
          parse: JSON.parse,
          function: (args) => {
            seen.push(args);
            return { temperature: 18, city: args.city };
          },
        },
      },
    ],
  });
  const content = await runner.finalContent();
  assert.deepEqual(seen, [{ city: 'Paris' }]);
  assert.match(content, /^get_weather \(call \S+\) said: \{"temperature":18,"city":"Paris"\}$/);
});

test('tool_choice "none": no tools given, the reply is text', async () => {
  const c = await client.chat.completions.create({ model: 'm', messages: question, tools, tool_choice: 'none' });
  const choice = c.choices[0];
  assert.equal(choice.finish_reason, 'stop');
  assert.ok(!choice.message.tool_calls?.length, JSON.stringify(choice.message));
  assert.match(choice.message.content, /<tool_call>/);
});
