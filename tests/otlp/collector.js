// The OTLP consumer of test_otlp.py: the OpenTelemetry JS project's
// protobufjs module, generated from opentelemetry-proto, decodes what
// harness-audit export sends.
//   node collector.js decode FILE          prints the request as JSON
//   node collector.js serve OUT [STATUS [MAX]]   an OTLP/HTTP collector
//       on 127.0.0.1 (its port on stdout): each POST /v1/traces decoded
//       and appended to OUT as a JSON line, answered STATUS (default
//       200); a body past MAX bytes answered 413, as a collector's
//       max_request_body_size
'use strict';
const fs = require('fs');
const http = require('http');
const root = require('@opentelemetry/otlp-proto-exporter-base/build/src/generated/root.js');

const pb = root.opentelemetry.proto.collector.trace.v1;

// A proto3 string that is no UTF-8 is a malformed request, as the
// OpenTelemetry Collector (Go's protobuf) takes it: refused whole, where
// protobufjs would read it with replacement characters.
const $protobuf = require('protobufjs/minimal');
const strict = new TextDecoder('utf-8', {fatal: true});
for (const R of [$protobuf.Reader, $protobuf.BufferReader])
  R.prototype.string = function strictString() {
    return strict.decode(this.bytes());
  };
const Req = pb.ExportTraceServiceRequest;

// Decoded as the OTLP/JSON encoding writes it: ids in hex.
function asJson(buf) {
  const msg = Req.decode(buf);
  const err = Req.verify(msg);
  if (err) throw new Error(err);
  return hexIds(Req.toObject(msg, {longs: String, enums: String, bytes: String}));
}

function hexIds(o) {
  if (Array.isArray(o)) return o.map(hexIds);
  if (o === null || typeof o !== 'object') return o;
  for (const k of Object.keys(o))
    o[k] = /^(traceId|spanId|parentSpanId)$/.test(k) ? Buffer.from(o[k], 'base64').toString('hex') : hexIds(o[k]);
  return o;
}

const [mode, arg, status, max] = process.argv.slice(2);
if (mode === 'decode') {
  console.log(JSON.stringify(asJson(fs.readFileSync(arg))));
} else if (mode === 'serve') {
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let code = Number(status || 200);
      let line;
      try {
        if (req.method !== 'POST' || req.url !== '/v1/traces' ||
            req.headers['content-type'] !== 'application/x-protobuf')
          throw new Error(`${req.method} ${req.url} ${req.headers['content-type']}`);
        const body = Buffer.concat(chunks);
        if (max && body.length > Number(max)) {
          code = 413;
          line = {ok: false, error: `${body.length} bytes: too large`};
        } else {
          line = {ok: true, body: asJson(body)};
        }
      } catch (e) {
        code = 400;
        line = {ok: false, error: String(e)};
      }
      fs.appendFileSync(arg, JSON.stringify(line) + '\n');
      const reply = pb.ExportTraceServiceResponse.encode({}).finish();
      res.writeHead(code, {'Content-Type': 'application/x-protobuf'});
      res.end(Buffer.from(reply));
    });
  });
  server.listen(0, '127.0.0.1', () => console.log(server.address().port));
} else {
  console.error('usage: collector.js decode FILE | serve OUT [STATUS [MAX]]');
  process.exit(2);
}
