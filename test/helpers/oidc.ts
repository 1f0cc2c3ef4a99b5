/**
 * A local OpenID Connect issuer for tests: an RS256 key pair, its JWKS served on the loopback,
 * and a signer of tokens (jose). Nothing leaves the machine.
 */
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import http from 'node:http';

export interface TestIssuer {
  /** The `iss` the server is configured with. */
  issuer: string;
  /** URL of the JWKS (for `oidcJwksUri`). */
  jwksUri: string;
  /** A signed token with these claims (`iss` and `aud` are not added: give them). */
  sign(claims: Record<string, unknown>, opts?: { key?: CryptoKey; exp?: number }): Promise<string>;
  /** A private key the JWKS does not hold (for forged tokens). */
  otherKey: CryptoKey;
  close(): void;
}

/** Start a JWKS server for a new key pair (`kid` k1). */
export async function startIssuer(issuer = 'https://issuer.test'): Promise<TestIssuer> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const other = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    issuer,
    jwksUri: `http://127.0.0.1:${port}/jwks`,
    otherKey: other.privateKey,
    sign: (claims, opts = {}) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuedAt()
        .setExpirationTime(opts.exp ?? Math.floor(Date.now() / 1000) + 300)
        .sign(opts.key ?? privateKey),
    close: () => server.close(),
  };
}
