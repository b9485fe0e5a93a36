import { inspect } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KnownSecretsFilter, redactKnown, redactSecrets } from '../../shared/http/redact.js';

const KEY = 'SECRET-MARKER-456-dskey0123456789';

describe('Function: redactSecrets', () => {
  it('redacts a known key, a piece of it quoted mid-message, and its start where the message was cut', () => {
    expect(redactSecrets(`Incorrect API key provided: ${KEY}. Partial ${KEY.slice(0, 20)}... end`, [KEY])).toBe(
      'Incorrect API key provided: [redacted]. Partial [redacted]... end',
    );
    expect(redactSecrets(`Bad key ${KEY.slice(5, 25)} (check it)`, [KEY])).toBe('Bad key [redacted] (check it)');
    expect(redactSecrets(`${'x'.repeat(20)}${KEY.slice(0, 9)}`, [KEY])).toBe(`${'x'.repeat(20)}[redacted]`);
    expect(redactSecrets('Nothing secret here at all, only words.', [KEY])).toBe('Nothing secret here at all, only words.');
    // A few characters a key starts with also end ordinary words.
    expect(redactSecrets('please check the disk-0', ['sk-0123456789abcdef0123'])).toBe('please check the disk-0');
  });

  it("redacts an authorization scheme's credential, and leaves the words that follow the schemes' names in prose", () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl';
    expect(redactSecrets(`it sent Bearer ${jwt}, refused`)).toBe('it sent Bearer [redacted], refused');
    expect(redactSecrets(`Basic ${Buffer.from('user:pass').toString('base64')} and bearer sk_live_abc123def`)).toBe('Basic [redacted] and bearer [redacted]');
    expect(redactSecrets('AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261127/us-east-1/bedrock/aws4_request')).toBe('AWS4-HMAC-SHA256 [redacted]');
    // Named as a header's value, a credential is redacted whatever it looks like, the scheme with it.
    const letters = 'abcdefghijklmnopqrstuvwx';
    expect(redactSecrets(`sent Authorization: Bearer ${letters}, refused`)).toBe('sent Authorization: [redacted], refused');
    // However written: a quoted credential, a scheme with a colon, util.inspect's arrays and maps.
    for (const written of [
      `Authorization: Bearer "${letters}"`,
      `Authorization: Bearer: ${letters}`,
      inspect({ headers: { authorization: [`Bearer ${letters}`] } }),
      inspect(new Map([['authorization', `Bearer ${letters}`]])),
      JSON.stringify(JSON.stringify({ 'x-api-key': letters, headers: { authorization: `Bearer ${letters}` } })),
    ]) {
      expect(redactSecrets(written), written).not.toContain(letters);
    }
    // The gateway's own warning had read "no usable token [redacted]".
    for (const prose of [
      'The provider reported no usable token usage; cost is unavailable',
      'Token limit exceeded',
      'the Basic tier allows it',
      'Token Usage: none',
      'a bearer of bad news',
      // Lists of header and field names.
      "headers 'x-api-key', 'anthropic-version' are required",
      'allowed headers: "Authorization", "Content-Type", "X-Request-Id"',
      JSON.stringify({ required: ['authorization', 'content-type'] }),
    ]) {
      expect(redactSecrets(prose)).toBe(prose);
    }
  });

  it('redacts a key a vendor quotes altered: lowercased, spelled out with separators, in base64, masked', () => {
    const key = 'KCANMISTRALx7Qw9Zr2Lm4Np6Tv8';
    expect(redactSecrets(`bad key ${key.toLowerCase()} lower`, [key])).toBe('bad key [redacted] lower');
    expect(redactSecrets(`bad key ${[...key].join('-')} spelled`, [key])).toBe('bad key [redacted] spelled');
    expect(redactSecrets(`header ${Buffer.from(key).toString('base64')} sent`, [key])).toBe('header [redacted] sent');
    expect(redactSecrets(`header ${Buffer.from(key).toString('base64url')}`, [key])).toBe('header [redacted]');
    // Encoded with something before it, the key's bytes fall elsewhere in base64's groups of 3.
    for (const before of ['x', 'xx', 'Bearer ', 'user:']) {
      for (const encoding of ['base64', 'base64url'] as const) {
        const quoted = redactSecrets(`header ${Buffer.from(before + key).toString(encoding)} sent`, [key]);
        expect(quoted).toMatch(/^header \S*\[redacted\]\S* sent$/);
        for (const word of quoted.split(/[\s[\]]+/)) expect(Buffer.from(word, 'base64').toString('latin1')).not.toMatch(/STRAL|x7Qw9/);
      }
    }
    expect(redactSecrets(`key KCANMI****************Tv8 masked, or KCAN…Tv8`, [key])).toBe('key [redacted] masked, or [redacted]');
    expect(redactSecrets(`KCAN...Tv8, KCANMI●●●●Tv8 and KCAN####Tv8`, [key])).toBe('[redacted], [redacted] and [redacted]');
    // A mask around other text, and a key's few letters in ordinary words, stay.
    expect(redactSecrets('card 4111********1111 and KCA**Tv and the kcan mistral room', [key])).toBe('card 4111********1111 and KCA**Tv and the kcan mistral room');
  });

  it("redacts the operator's accounts with its vendors, and leaves numbers, words and model ARNs' neighbours alone", () => {
    expect(redactSecrets('In organization org-AbCdEfGh12345678IjKl (Groq: org_01hq2b3c4d5e6f7g8h9j0kmnpq), project proj_AbCdEfGh12345678IjKl.')).toBe(
      'In organization [redacted] (Groq: [redacted]), project [redacted].',
    );
    expect(redactSecrets('role arn:aws:iam::123456789012:role/Gateway-Fn, or arn:aws-us-gov:bedrock:us-gov-west-1::foundation-model/x. Account 210987654321.')).toBe(
      'role [redacted], or [redacted]. Account [redacted].',
    );
    expect(redactSecrets("consumer 'projects/987654321098', project_number: 555 and organization 4C5D1A2E-0000-4000-8000-0123456789AB")).toBe(
      "consumer 'projects/[redacted]', project_number: [redacted] and organization [redacted]",
    );
    expect(
      redactSecrets('API has not been used in project 98765432101 before; enable it at /overview?project=98765432101. Permission denied on resource project my-gateway-prod-4821.'),
    ).toBe('API has not been used in project [redacted] before; enable it at /overview?project=[redacted]. Permission denied on resource project [redacted].');
    // Ordinary words and numbers: token counts, a 13-digit time, a version, the words themselves.
    // Bedrock is signed with the function's AWS credentials, never a key of the gateway's: their
    // session token, quoted in a canonical request AWS could not verify, or named in a dump.
    const token = 'IQoJb3JpZ2luX2VjEHYaCXVzLWVhc3QtMSJHMEUCIQD8xZ/examplesessiontoken+Zx9Lm3Qp7Vb2Nc4Tz8Wy6Ks1Df==';
    const secret = 'R75KEYawssecretZx9Lm3Qp7Vb2Nc4Tz8Wy6Ks1Df';
    for (const written of [
      `The request signature we calculated does not match. The Canonical String for this request should have been 'POST\n/model/x/converse\n\nhost:bedrock-runtime.us-east-1.amazonaws.com\nx-amz-date:20261127T120000Z\nx-amz-security-token:${token}\n'`,
      `GET /?X-Amz-Security-Token=${encodeURIComponent(token)}&X-Amz-Date=20261127T120000Z`,
      `a token ${token.slice(0, 40)} cut short`,
      inspect({ accessKeyId: 'ASIAEXAMPLEEXAMPLE12', secretAccessKey: secret, sessionToken: token }),
      `AWS_SECRET_ACCESS_KEY=${secret} AWS_SESSION_TOKEN=${token}`,
    ]) {
      const redacted = redactSecrets(written);
      expect(redacted, written).not.toContain(secret);
      expect(redacted, written).not.toMatch(/IQoJb3JpZ2lu|Zx9Lm3Qp7Vb2Nc4Tz8Wy6Ks1Df/);
    }
    expect(redactSecrets('The security token included in the request is invalid.')).toBe('The security token included in the request is invalid.');
    const plain = 'This model takes at most 128000 tokens (1795737612114 ms, v1.123456789012.3); learn: your organization or project may not use it; org-chart';
    expect(redactSecrets(plain)).toBe(plain);
  });
});

describe('Class: KnownSecretsFilter', () => {
  it('passes on, joined, what redactKnown makes of the whole text, however the text is split, and never the key', () => {
    const text = fc
      .array(fc.oneof(fc.string({ maxLength: 20 }), fc.constant(KEY), fc.constant(KEY.slice(0, 10)), fc.constant('S')), { maxLength: 12 })
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(text, fc.array(fc.nat({ max: 60 }), { maxLength: 10 }), (whole, cuts) => {
        const filter = new KnownSecretsFilter([KEY]);
        const positions = [...new Set(cuts.map((c) => Math.min(c, whole.length)))].sort((a, b) => a - b);
        let passed = '';
        let from = 0;
        for (const at of [...positions, whole.length]) {
          passed += filter.push(whole.slice(from, at));
          from = at;
        }
        passed += filter.end();
        expect(passed).toBe(redactKnown(whole, [KEY]));
        expect(passed).not.toContain(KEY);
      }),
      { numRuns: 500 },
    );
  });

  it('holds nothing back of text that cannot start the key', () => {
    const filter = new KnownSecretsFilter([KEY]);
    expect(filter.push('Hello there. ')).toBe('Hello there. ');
    expect(filter.push('Then S')).toBe('Then ');
    expect(filter.push('ome more')).toBe('Some more');
  });

  it('passes on no piece that ends between the halves of a surrogate pair, with or without a key to watch for: the pair goes whole with the next piece', () => {
    for (const filter of [new KnownSecretsFilter([KEY]), new KnownSecretsFilter([undefined])]) {
      const passed = [filter.push('caf\ud83d'), filter.push('\ude00!'), filter.push('S\ud83d'), filter.end()];
      expect(passed).toEqual(['caf', '\ud83d\ude00!', 'S', '\ud83d']);
      for (const piece of passed.slice(0, 2)) expect(piece.isWellFormed()).toBe(true);
    }
  });
});
