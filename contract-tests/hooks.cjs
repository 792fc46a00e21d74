'use strict';
// Dredd requires hook files, as CommonJS only, and gives them its hooks object as the module 'hooks'. The hooks
// are dredd-hooks.ts, loaded by run.ts (which runs Dredd in its own process) and installed from here.
globalThis.installContractHooks(require('hooks'));
