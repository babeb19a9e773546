#!/usr/bin/env node
"use strict";
// For running hookc by hand; forwarders run the platform binary directly (see run.js).
require("./run.js")("hookc");
