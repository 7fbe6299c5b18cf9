// A software authenticator for tests (ES256 with node:crypto), so the server's WebAuthn flow runs
// without a browser: it makes a passkey (a registration answer with "none" attestation) and signs
// assertions, as a platform authenticator would, with knobs for what an attacker would change
// (the origin, the counter, user verification, the backup flags).
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

/** WebAuthn's authenticator-data flags. */
const UP = 0x01;
const UV = 0x04;
const BE = 0x08;
const BS = 0x10;
const AT = 0x40;

export interface AuthenticatorOptions {
  rpId?: string;
  origin?: string;
  /** A synced passkey (backup eligible and backed up); false: bound to one device. */
  synced?: boolean;
  /** Keeps a signature counter (a security key); false: always 0 (a synced passkey). */
  counter?: boolean;
}

export interface AssertionOverrides {
  origin?: string;
  /** The counter to report (default: the next one). */
  signCount?: number;
  userVerified?: boolean;
  /** Backup flags to report instead of the credential's. */
  backupEligible?: boolean;
  backedUp?: boolean;
  /** The user handle to send (default: the one given at registration). */
  userHandle?: string | null;
  type?: string;
}

export class SoftAuthenticator {
  readonly rpId: string;
  readonly origin: string;
  readonly credentialId = b64url(randomBytes(32));
  private readonly privateKey: KeyObject;
  private readonly publicJwk: { x: string; y: string };
  private readonly synced: boolean;
  private readonly keepsCounter: boolean;
  signCount = 0;
  userHandle: string | null = null;

  constructor(options: AuthenticatorOptions = {}) {
    this.rpId = options.rpId ?? 'localhost';
    this.origin = options.origin ?? 'http://localhost:3000';
    this.synced = options.synced ?? true;
    this.keepsCounter = options.counter ?? !this.synced;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = privateKey;
    const jwk = publicKey.export({ format: 'jwk' });
    this.publicJwk = { x: jwk.x!, y: jwk.y! };
  }

  private flags(userVerified: boolean, backupEligible: boolean, backedUp: boolean) {
    return UP | (userVerified ? UV : 0) | (backupEligible ? BE : 0) | (backedUp ? BS : 0);
  }

  private clientData(type: string, challenge: string, origin: string) {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** The browser's RegistrationResponseJSON to creation options (as the API answered them). */
  register(options: { challenge: string; user: { id: string } }, overrides: { origin?: string; userVerified?: boolean } = {}) {
    this.userHandle = options.user.id;
    const cose = new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, new Uint8Array(Buffer.from(this.publicJwk.x, 'base64url'))],
      [-3, new Uint8Array(Buffer.from(this.publicJwk.y, 'base64url'))],
    ]);
    const credentialId = Buffer.from(this.credentialId, 'base64url');
    const count = Buffer.alloc(4);
    count.writeUInt32BE(this.keepsCounter ? this.signCount : 0);
    const length = Buffer.alloc(2);
    length.writeUInt16BE(credentialId.length);
    const authData = Buffer.concat([
      sha256(this.rpId),
      Buffer.from([this.flags(overrides.userVerified ?? true, this.synced, this.synced) | AT]),
      count,
      Buffer.alloc(16),
      length,
      credentialId,
      Buffer.from(isoCBOR.encode(cose)),
    ]);
    const attestation: Parameters<typeof isoCBOR.encode>[0] = new Map<string, Parameters<typeof isoCBOR.encode>[0]>([
      ['fmt', 'none'],
      ['attStmt', new Map<string, never>()],
      ['authData', new Uint8Array(authData)],
    ]);
    const attestationObject = isoCBOR.encode(attestation);
    return {
      id: this.credentialId,
      rawId: this.credentialId,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(this.clientData('webauthn.create', options.challenge, overrides.origin ?? this.origin)),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
      },
      clientExtensionResults: { credProps: { rk: true } },
      authenticatorAttachment: 'platform',
    };
  }

  /** The browser's AuthenticationResponseJSON to request options' challenge. */
  assert(challenge: string, overrides: AssertionOverrides = {}) {
    if (overrides.signCount === undefined && this.keepsCounter) this.signCount += 1;
    const signCount = overrides.signCount ?? (this.keepsCounter ? this.signCount : 0);
    const count = Buffer.alloc(4);
    count.writeUInt32BE(signCount);
    const authenticatorData = Buffer.concat([
      sha256(this.rpId),
      Buffer.from([this.flags(overrides.userVerified ?? true, overrides.backupEligible ?? this.synced, overrides.backedUp ?? this.synced)]),
      count,
    ]);
    const clientDataJSON = this.clientData(overrides.type ?? 'webauthn.get', challenge, overrides.origin ?? this.origin);
    const signature = sign('sha256', Buffer.concat([authenticatorData, sha256(clientDataJSON)]), this.privateKey);
    const userHandle = overrides.userHandle === undefined ? this.userHandle : overrides.userHandle;
    return {
      id: this.credentialId,
      rawId: this.credentialId,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authenticatorData),
        signature: b64url(signature),
        ...(userHandle ? { userHandle } : {}),
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}
