#!/usr/bin/env node
// The `tapedeck` command. A plain file in the repository (not in dist/) so that npm can link
// it at install time, before `prepare` has compiled the TypeScript it loads.
import "../dist/cli/main.js";
