// Drives `swarmt serve` with the official OpenAI JavaScript client (fetched into the test fixtures
// from npm). Usage: node openai_client.mjs FIXTURES_DIR BASE_URL. Prints one JSON object of what it
// got; exits non-zero on any error the client raises.
import { createRequire } from 'module';

const [fixtures, baseURL] = process.argv.slice(2);
const require = createRequire(fixtures + '/');
const mod = require('openai');
const OpenAI = mod.OpenAI ?? mod.default ?? mod;
const client = new OpenAI({ baseURL, apiKey: 'test-key', maxRetries: 0, timeout: 60000 });

const models = await client.models.list();
const model = models.data[0].id;

const prompt = 'The quick brown fox';
const completion = await client.completions.create({ model, prompt, max_tokens: 10, temperature: 0 });
let streamedCompletion = '';
for await (const chunk of await client.completions.create({ model, prompt, max_tokens: 10, temperature: 0, stream: true })) {
  streamedCompletion += chunk.choices[0]?.text ?? '';
}

const messages = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello there' }];
const chat = await client.chat.completions.create({ model, messages, max_tokens: 8, temperature: 0 });
let streamedChat = '';
let usage = null;
for await (const chunk of await client.chat.completions.create({
  model, messages, max_tokens: 8, temperature: 0, stream: true, stream_options: { include_usage: true },
})) {
  streamedChat += chunk.choices[0]?.delta?.content ?? '';
  if (chunk.usage) usage = chunk.usage;
}

let refused = null;
try {
  await client.completions.create({ model, prompt, max_tokens: -1 });
} catch (e) {
  refused = { status: e.status, param: e.param ?? e.error?.param ?? null };
}

console.log(JSON.stringify({
  model,
  completion: completion.choices[0].text,
  completion_usage: completion.usage,
  streamed_completion: streamedCompletion,
  chat: chat.choices[0].message.content,
  chat_role: chat.choices[0].message.role,
  streamed_chat: streamedChat,
  streamed_usage: usage,
  refused,
}));
