import { createHash } from 'node:crypto';
import type { JWTPayload, JWTVerifyGetKey } from 'jose';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import type * as Client from 'openid-client';
import type { OidcConfig } from '../../config.js';
import { invalid, unauthorized, unavailable } from '../errors.js';

/** Who the provider says signed in, from an ID token whose signature and claims were checked. */
export interface ProviderIdentity {
  issuer: string;
  subject: string;
  /** The `email` claim, if any, and whether the provider says it verified it. */
  email: string | undefined;
  emailVerified: boolean;
  name: string | undefined;
  preferredUsername: string | undefined;
}

/**
 * What the app sends after signing in at the provider: its ID token, or the code of a code flow with PKCE;
 * with the password of an existing account with the same email when it asks to link it.
 */
export type ProviderProof = ({ id_token: string; nonce?: string } | { code: string; code_verifier: string; redirect_uri: string; nonce?: string }) & {
  link_password?: string;
};

/** Leeway for clocks that differ between the provider and this service. */
const CLOCK_TOLERANCE_SECS = 30;
/**
 * An ID token is exchanged right after the sign-in at the provider: one issued (`iat`) longer ago than
 * this is refused, whatever its expiry; so is one issued in the future (beyond the clock leeway).
 */
const ID_TOKEN_MAX_AGE_SECS = 600;
/** `typ` header values of an ID token (compared without case or an `application/` prefix); absent is accepted too. */
const ID_TOKEN_TYPES = new Set(['jwt', 'id_token+jwt']);
/** Cached keys are fetched again after this long even if no unknown key was seen. */
const JWKS_MAX_AGE_MS = 10 * 60_000;

const UNREACHABLE = 'the identity provider cannot be reached; try again later';

/**
 * jose and openid-client, loaded on first use: a service without OIDC_ISSUER never loads them, and starts
 * as fast as before.
 */
type Libraries = { jose: typeof import('jose'); client: typeof Client };
let libraries: Promise<Libraries> | undefined;
const loadLibraries = (): Promise<Libraries> => (libraries ??= Promise.all([import('jose'), import('openid-client')]).then(([jose, client]) => ({ jose, client })));

interface Discovered {
  /** The issuer exactly as the provider writes it (discovery checked that it is OIDC_ISSUER's URL). */
  issuer: string;
  client: Client.Configuration;
  keys: ReturnType<Libraries['jose']['createRemoteJWKSet']>;
}

/** Raised while fetching from the provider: answered 503, unlike a token that fails its checks (401). */
class ProviderUnreachable extends Error {}

/**
 * An OpenID Connect provider this service trusts (OIDC_* settings). Its discovery document is fetched on
 * first use (with a timeout, shared by concurrent requests, kept for the life of the process); after a
 * failure, requests are answered 503 without asking again until the cooldown has passed. Its keys are
 * cached by jose's remote key set: a token signed with a key not in the cache fetches them again, at most
 * once per cooldown, which is how a rotation at the provider is followed.
 */
export class OidcProvider {
  #discovered: Promise<Discovered> | undefined;
  #failedAt = -Infinity;
  readonly #secret: Uint8Array | undefined;
  /**
   * ID tokens sent without a nonce and accepted, by SHA-256, until they are too old to be accepted anyway:
   * each is accepted once (in this process).
   */
  readonly #used = new RateLimiterMemory({ points: 1, duration: ID_TOKEN_MAX_AGE_SECS + 2 * CLOCK_TOLERANCE_SECS, keyPrefix: 'oidc-id-tokens' });

  constructor(readonly config: OidcConfig) {
    this.#secret = config.clientSecret === undefined ? undefined : new TextEncoder().encode(config.clientSecret);
  }

  /** Checks the proof and answers who signed in: 401 for a proof that fails a check, 503 when the provider cannot be reached. */
  async identify(proof: ProviderProof): Promise<ProviderIdentity> {
    if ('id_token' in proof) {
      const identity = await this.#verify(proof.id_token, proof.nonce);
      // Without a nonce, nothing ties the token to this sign-in: a copy of it must not sign in again.
      if (proof.nonce === undefined) {
        const digest = createHash('sha256').update(proof.id_token).digest('base64url');
        await this.#used.consume(digest).catch(() => {
          throw unauthorized('the ID token is not accepted: it was used before (without a nonce, an ID token is accepted once)');
        });
      }
      return identity;
    }
    // A code is redeemed once, at the provider: the ID token it yields is fresh.
    return this.#verify(await this.#redeemCode(proof), proof.nonce);
  }

  async #discover(): Promise<Discovered> {
    if (Date.now() - this.#failedAt < this.config.jwksCooldownSecs * 1000) throw unavailable(UNREACHABLE);
    this.#discovered ??= this.#fetchDiscovery().catch((error: unknown) => {
      this.#discovered = undefined;
      this.#failedAt = Date.now();
      throw error;
    });
    return this.#discovered;
  }

  async #fetchDiscovery(): Promise<Discovered> {
    const { jose, client } = await loadLibraries();
    const { issuer, clientId, clientSecret, timeoutSecs, jwksCooldownSecs } = this.config;
    const plainHttp = new URL(issuer).protocol === 'http:';
    let configuration: Client.Configuration;
    try {
      configuration = await client.discovery(
        new URL(issuer),
        clientId,
        clientSecret,
        clientSecret === undefined ? client.None() : undefined,
        { timeout: timeoutSecs, execute: plainHttp ? [client.allowInsecureRequests] : [] },
      );
    } catch (error) {
      throw unavailable(UNREACHABLE, error);
    }
    const jwksUri = configuration.serverMetadata().jwks_uri;
    if (!jwksUri) throw unavailable(UNREACHABLE, new Error('the discovery document names no jwks_uri'));
    const keys = jose.createRemoteJWKSet(new URL(jwksUri), {
      timeoutDuration: timeoutSecs * 1000,
      cooldownDuration: jwksCooldownSecs * 1000,
      cacheMaxAge: JWKS_MAX_AGE_MS,
    });
    return { issuer: configuration.serverMetadata().issuer, client: configuration, keys };
  }

  /** The ID token the provider's token endpoint gives for an authorization code (PKCE). */
  async #redeemCode(proof: { code: string; code_verifier: string; redirect_uri: string; nonce?: string }): Promise<string> {
    const redirect = new URL(proof.redirect_uri);
    if (redirect.search || redirect.hash) throw invalid("redirect_uri must have no query or fragment", [{ location: 'body', path: 'redirect_uri', message: 'must have no query or fragment' }]);
    const { client: configuration, issuer } = await this.#discover();
    const { client } = await loadLibraries();
    const response = new URL(redirect);
    response.searchParams.set('code', proof.code);
    // The token request is made for the redirect the code was issued to; providers that announce the
    // `iss` response parameter send it with every code, and this service trusts one issuer only.
    if (configuration.serverMetadata().authorization_response_iss_parameter_supported) response.searchParams.set('iss', issuer);
    try {
      const tokens = await client.authorizationCodeGrant(configuration, response, {
        pkceCodeVerifier: proof.code_verifier,
        expectedNonce: proof.nonce,
        idTokenExpected: true,
      });
      if (!tokens.id_token) throw unauthorized('the identity provider issued no ID token for this code');
      return tokens.id_token;
    } catch (error) {
      if (isUnreachable(error)) throw unavailable(UNREACHABLE);
      if (error instanceof client.ResponseBodyError) throw unauthorized(`the identity provider refused the code: ${error.error}`);
      if (error instanceof client.ClientError || error instanceof client.AuthorizationResponseError || error instanceof client.WWWAuthenticateChallengeError) {
        throw unauthorized(`the identity provider's answer failed its checks: ${error.message}`);
      }
      throw error;
    }
  }

  async #verify(idToken: string, nonce: string | undefined): Promise<ProviderIdentity> {
    const { keys, issuer } = await this.#discover();
    const { jose } = await loadLibraries();
    const joseErrors = jose.errors;
    const { clientId, allowedAlgs } = this.config;
    const getKey: JWTVerifyGetKey = async (header, token) => {
      if (header.alg?.startsWith('HS')) {
        if (!this.#secret) throw new joseErrors.JOSEAlgNotAllowed('"alg" (Algorithm) Header Parameter value not allowed');
        return this.#secret;
      }
      try {
        return await keys(header, token);
      } catch (error) {
        // A key that is not published (even after fetching the keys again) is the token's fault; a key set
        // that cannot be fetched or read is the provider's.
        if (error instanceof joseErrors.JWKSNoMatchingKey || error instanceof joseErrors.JWKSMultipleMatchingKeys || error instanceof joseErrors.JOSENotSupported) throw error;
        throw new ProviderUnreachable(describe(error));
      }
    };
    let payload: JWTPayload;
    let typ: string | undefined;
    try {
      ({ payload, protectedHeader: { typ } } = await jose.jwtVerify(idToken, getKey, {
        issuer,
        audience: clientId,
        algorithms: allowedAlgs,
        clockTolerance: CLOCK_TOLERANCE_SECS,
        maxTokenAge: ID_TOKEN_MAX_AGE_SECS,
        requiredClaims: ['sub', 'exp', 'iat'],
      }));
    } catch (error) {
      if (error instanceof ProviderUnreachable) throw unavailable(UNREACHABLE);
      if (error instanceof joseErrors.JOSEError) throw unauthorized(`the ID token is not accepted: ${tokenProblem(joseErrors, error)}`);
      throw error;
    }
    // An access token (RFC 9068's at+jwt) or any other kind of JWT the provider signs is not a sign-in.
    if (typ !== undefined && !ID_TOKEN_TYPES.has(typ.toLowerCase().replace(/^application\//, ''))) throw unauthorized(`the ID token is not accepted: it is not an ID token (typ ${typ})`);
    // The party the token was issued to, when named, must be this service; with several audiences it must be named.
    if (payload.azp !== undefined ? payload.azp !== clientId : Array.isArray(payload.aud) && payload.aud.length > 1) throw unauthorized('the ID token is not accepted: it was issued to another party (azp)');
    if (nonce !== undefined && payload.nonce !== nonce) throw unauthorized('the ID token is not accepted: its nonce does not match');
    if (typeof payload.sub !== 'string' || payload.sub === '' || payload.sub.length > 255) throw unauthorized("the ID token is not accepted: its 'sub' claim is not an identifier");
    const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);
    return {
      issuer,
      subject: payload.sub,
      email: text(payload.email),
      // Some providers send the flag as a string.
      emailVerified: payload.email_verified === true || payload.email_verified === 'true',
      name: text(payload.name),
      preferredUsername: text(payload.preferred_username),
    };
  }
}

/** What was wrong with a token, in words a client can act on. */
function tokenProblem(joseErrors: Libraries['jose']['errors'], error: InstanceType<Libraries['jose']['errors']['JOSEError']>): string {
  if (error instanceof joseErrors.JWTExpired) return error.claim === 'iat' ? `it was issued more than ${ID_TOKEN_MAX_AGE_SECS} s ago` : 'it has expired';
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === 'nbf') return 'it is not valid yet';
    if (error.claim === 'iat') return 'it was issued in the future';
    return `its '${error.claim}' claim is not the expected one`;
  }
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return 'it is not signed with an accepted algorithm';
  if (error instanceof joseErrors.JWKSNoMatchingKey) return 'it is signed with a key the provider does not publish';
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'its signature does not verify';
  return 'it is not a well-formed signed JWT';
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** openid-client's codes for an answer that is not an OAuth answer at all (an error page, a proxy's reply). */
const NOT_AN_OAUTH_ANSWER = new Set(['OAUTH_RESPONSE_IS_NOT_CONFORM', 'OAUTH_RESPONSE_IS_NOT_JSON']);

/** A network failure, a timeout or a provider answering with an error page. */
function isUnreachable(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth += 1) {
    if (current.name === 'TimeoutError' || current.name === 'AbortError') return true;
    if (current instanceof TypeError && current.message === 'fetch failed') return true;
    const code = (current as { code?: unknown }).code;
    if ((typeof code === 'string' && NOT_AN_OAUTH_ANSWER.has(code)) || code === 'ECONNREFUSED') return true;
  }
  return false;
}
