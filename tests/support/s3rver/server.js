'use strict';
// A real S3-compatible server for Nereid's tests: s3rver (pinned in package.json), on loopback,
// plus what s3rver 3.7 lacks: it only checks that the access key id exists and accepts any
// Signature V4, so this wrapper verifies every SigV4 Authorization header against the account's
// secret (an independent check of the requests libcurl signs) and answers SignatureDoesNotMatch.
//
//   node --openssl-legacy-provider server.js --dir DIR [--bucket NAME]... [--service-endpoint HOST] [--key F --cert F]
// Prints "S3 listening on <address>:<port>" once serving. Credentials: S3RVER / S3RVER.

const crypto = require('crypto');
const S3rver = require('s3rver');

const SECRETS = { S3RVER: 'S3RVER' };

function args(argv) {
  const out = { buckets: [] };
  for (let i = 2; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === '--bucket') out.buckets.push(value);
    else out[flag.replace(/^--/, '')] = value;
  }
  return out;
}

const sha256 = data => crypto.createHash('sha256').update(data).digest('hex');
const hmac = (key, data) => crypto.createHmac('sha256', key).update(data).digest();

// Returns null when the request's SigV4 signature is right, otherwise why not.
function checkSignature(req) {
  const auth = req.headers.authorization;
  if (!auth || !auth.startsWith('AWS4-HMAC-SHA256 ')) return null;  // anonymous or V2: s3rver's
  const fields = {};
  for (const part of auth.slice('AWS4-HMAC-SHA256 '.length).split(',')) {
    const eq = part.indexOf('=');
    fields[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  const [accessKey, date, region, service, terminator] = (fields.Credential || '').split('/');
  const secret = SECRETS[accessKey];
  if (secret === undefined) return null;  // s3rver answers InvalidAccessKeyId
  const signedHeaders = (fields.SignedHeaders || '').split(';');
  const [path, query = ''] = req.url.split('?');
  const canonicalQuery = query
    .split('&')
    .filter(p => p.length > 0)
    .map(p => (p.includes('=') ? p : `${p}=`))
    .sort()
    .join('&');
  const canonicalHeaders = signedHeaders
    .map(h => `${h}:${String(req.headers[h] || '').trim().replace(/\s+/g, ' ')}\n`)
    .join('');
  const payloadHash = req.headers['x-amz-content-sha256'] || sha256('');
  const canonicalRequest = [req.method, path, canonicalQuery, canonicalHeaders,
    signedHeaders.join(';'), payloadHash].join('\n');
  const scope = [date, region, service, terminator].join('/');
  const stringToSign = ['AWS4-HMAC-SHA256', req.headers['x-amz-date'], scope,
    sha256(canonicalRequest)].join('\n');
  let key = hmac(`AWS4${secret}`, date);
  for (const part of [region, service, terminator]) key = hmac(key, part);
  const expected = crypto.createHmac('sha256', key).update(stringToSign).digest('hex');
  if (!signedHeaders.includes('host')) return 'the host header is not signed';
  return expected === fields.Signature ? null : 'signature mismatch';
}

async function main() {
  const opts = args(process.argv);
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: opts.dir,
    serviceEndpoint: opts['service-endpoint'] || 'amazonaws.com',
    configureBuckets: opts.buckets.map(name => ({ name })),
    ...(opts.key && opts.cert
      ? { key: require('fs').readFileSync(opts.key), cert: require('fs').readFileSync(opts.cert) }
      : {}),
  });
  server.middleware.unshift(async (ctx, next) => {
    const problem = checkSignature(ctx.req);
    if (problem === null) return next();
    ctx.status = 403;
    ctx.type = 'application/xml';
    ctx.body = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SignatureDoesNotMatch' +
      `</Code><Message>${problem}</Message></Error>`;
  });
  const { address, port } = await server.run();
  process.stdout.write(`S3 listening on ${address}:${port}\n`);
}

main().catch(err => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
