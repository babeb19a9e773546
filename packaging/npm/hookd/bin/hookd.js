#!/usr/bin/env node
"use strict";
require("./run.js")("hookd");
