#!/usr/bin/env node
// The effect-agent-session command line. It runs the TypeScript entry (src/cli/main.ts) through
// tsx, so it works straight after `npm ci`, without a build step.
import { register } from "tsx/esm/api"

register()
await import("../src/cli/main.ts")
