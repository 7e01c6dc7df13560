#!/usr/bin/env node
// The effect-agent-session command line: the compiled entry (built into dist/ by `npm pack`).
import "../dist/main.js"
