import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';

/**
 * EIP-712 typed-data hashing and signer recovery for structs of `uint` and `address` fields (all an
 * order-book order holds), on the audited noble primitives (keccak-256, secp256k1).
 */

export interface Eip712Domain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: string;
}

export interface Eip712Field {
  name: string;
  type: 'uint256' | 'uint8' | 'address';
}

const DOMAIN_TYPE = 'EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)';

const keccak = (...parts: Uint8Array[]) => keccak_256(concatBytes(...parts));
/** A uint or an address as one 32-byte word, big-endian. */
const word = (value: bigint) => hexToBytes(value.toString(16).padStart(64, '0'));

/** The digest an EIP-712 signature signs: keccak256(0x1901 ‖ domain separator ‖ struct hash). */
export function typedDataDigest(domain: Eip712Domain, primaryType: string, fields: readonly Eip712Field[], message: Readonly<Record<string, bigint | number | string>>): Uint8Array {
  const separator = keccak(
    keccak(utf8ToBytes(DOMAIN_TYPE)),
    keccak(utf8ToBytes(domain.name)),
    keccak(utf8ToBytes(domain.version)),
    word(BigInt(domain.chainId)),
    word(BigInt(domain.verifyingContract)),
  );
  const typeHash = keccak(utf8ToBytes(`${primaryType}(${fields.map((f) => `${f.type} ${f.name}`).join(',')})`));
  const structHash = keccak(typeHash, ...fields.map((f) => word(BigInt(message[f.name]!))));
  return keccak(new Uint8Array([0x19, 0x01]), separator, structHash);
}

/** The address (lower case) whose key made a 65-byte `r ‖ s ‖ v` signature of the digest; undefined if none. */
export function recoverSigner(digest: Uint8Array, signature: string): string | undefined {
  if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) return undefined;
  const bytes = hexToBytes(signature.slice(2));
  const v = bytes[64]!;
  const recovery = v >= 27 ? v - 27 : v;
  if (recovery !== 0 && recovery !== 1) return undefined;
  try {
    const key = secp256k1.Signature.fromBytes(bytes.subarray(0, 64), 'compact').addRecoveryBit(recovery).recoverPublicKey(digest).toBytes(false);
    return `0x${bytesToHex(keccak_256(key.subarray(1)).subarray(12))}`;
  } catch {
    return undefined;
  }
}

export const toHex = (bytes: Uint8Array): string => `0x${bytesToHex(bytes)}`;
