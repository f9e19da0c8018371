//! `jsonwebtoken`'s cryptography over *ring*: the same algorithms, key
//! formats and checks as the crate's own aws-lc-rs provider (RSA keys as
//! PKCS#1 DER or RSA components, EC keys as PKCS#8 DER or uncompressed
//! points, Ed25519 as PKCS#8 DER or raw public keys).
//!
//! One signer and one verifier type cover every algorithm: the key is
//! parsed once, when `jsonwebtoken` asks for a signer or verifier, and each
//! holds the *ring* algorithm it was built for, so a key of one family can
//! never be used with another family's algorithm.

use jsonwebtoken::crypto::{CryptoProvider, JwtSigner, JwtVerifier, KeyUtils};
use jsonwebtoken::errors::{Error, ErrorKind, Result};
use jsonwebtoken::jwk::{EllipticCurve, ThumbprintHash};
use jsonwebtoken::signature::{self, Signer, Verifier};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, DecodingKeyKind, EncodingKey};
use ring::rand::SystemRandom;
use ring::signature::{self as sig, EcdsaKeyPair, Ed25519KeyPair, KeyPair, RsaKeyPair};
use ring::{digest, hmac};

/// The provider [`super::install_crypto_provider`] installs.
pub(super) static PROVIDER: CryptoProvider = CryptoProvider {
    signer_factory: new_signer,
    verifier_factory: new_verifier,
    key_utils: KeyUtils {
        rsa_pub_components_from_private_key: rsa_components_from_private_key,
        rsa_pub_components_from_public_key: rsa_components_from_public_key,
        ec_pub_components_from_private_key: ec_components_from_private_key,
        ed_pub_components_from_private_key: ed_component_from_private_key,
        compute_digest,
    },
};

/// What a signature needs of the algorithm, by family.
enum SigningKey {
    Hmac(hmac::Key),
    Rsa(RsaKeyPair, &'static dyn sig::RsaEncoding),
    Ecdsa(EcdsaKeyPair),
    Ed25519(Ed25519KeyPair),
}

struct RingSigner {
    algorithm: Algorithm,
    key: SigningKey,
}

impl Signer<Vec<u8>> for RingSigner {
    fn try_sign(&self, msg: &[u8]) -> std::result::Result<Vec<u8>, signature::Error> {
        let rng = SystemRandom::new();
        match &self.key {
            SigningKey::Hmac(key) => Ok(hmac::sign(key, msg).as_ref().to_vec()),
            SigningKey::Rsa(pair, padding) => {
                let mut out = vec![0; pair.public().modulus_len()];
                pair.sign(*padding, &rng, msg, &mut out)
                    .map_err(|_| signature::Error::new())?;
                Ok(out)
            }
            SigningKey::Ecdsa(pair) => Ok(pair
                .sign(&rng, msg)
                .map_err(|_| signature::Error::new())?
                .as_ref()
                .to_vec()),
            SigningKey::Ed25519(pair) => Ok(pair.sign(msg).as_ref().to_vec()),
        }
    }
}

impl JwtSigner for RingSigner {
    fn algorithm(&self) -> Algorithm {
        self.algorithm
    }
}

fn new_signer(algorithm: &Algorithm, key: &EncodingKey) -> Result<Box<dyn JwtSigner>> {
    if key.family() != algorithm.family() {
        return Err(ErrorKind::InvalidKeyFormat.into());
    }
    let der = key.as_bytes();
    let key = match algorithm {
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => {
            SigningKey::Hmac(hmac::Key::new(hmac_algorithm(*algorithm), der))
        }
        Algorithm::RS256
        | Algorithm::RS384
        | Algorithm::RS512
        | Algorithm::PS256
        | Algorithm::PS384
        | Algorithm::PS512 => SigningKey::Rsa(rsa_key_pair(der)?, rsa_padding(*algorithm)),
        Algorithm::ES256 | Algorithm::ES384 => SigningKey::Ecdsa(ecdsa_key_pair(*algorithm, der)?),
        Algorithm::EdDSA => SigningKey::Ed25519(
            Ed25519KeyPair::from_pkcs8_maybe_unchecked(der).map_err(|_| ErrorKind::InvalidEddsaKey)?,
        ),
        _ => return Err(ErrorKind::InvalidAlgorithm.into()),
    };
    Ok(Box::new(RingSigner {
        algorithm: *algorithm,
        key,
    }))
}

/// What a verification needs of the key, by family.
enum VerifyingKey {
    Hmac(hmac::Key),
    /// DER or an uncompressed point, as *ring* parses it for `algorithm`.
    Public(&'static dyn sig::VerificationAlgorithm, Vec<u8>),
    RsaComponents(&'static sig::RsaParameters, Vec<u8>, Vec<u8>),
}

struct RingVerifier {
    algorithm: Algorithm,
    key: VerifyingKey,
}

impl Verifier<Vec<u8>> for RingVerifier {
    fn verify(&self, msg: &[u8], signature: &Vec<u8>) -> std::result::Result<(), signature::Error> {
        match &self.key {
            VerifyingKey::Hmac(key) => hmac::verify(key, msg, signature),
            VerifyingKey::Public(algorithm, bytes) => {
                sig::UnparsedPublicKey::new(*algorithm, bytes).verify(msg, signature)
            }
            VerifyingKey::RsaComponents(parameters, n, e) => {
                sig::RsaPublicKeyComponents { n, e }.verify(parameters, msg, signature)
            }
        }
        .map_err(|_| signature::Error::new())
    }
}

impl JwtVerifier for RingVerifier {
    fn algorithm(&self) -> Algorithm {
        self.algorithm
    }
}

fn new_verifier(algorithm: &Algorithm, key: &DecodingKey) -> Result<Box<dyn JwtVerifier>> {
    if key.family() != algorithm.family() {
        return Err(ErrorKind::InvalidKeyFormat.into());
    }
    let key = match (algorithm.family(), key.kind()) {
        (AlgorithmFamily::Hmac, DecodingKeyKind::SecretOrDer(secret)) => {
            VerifyingKey::Hmac(hmac::Key::new(hmac_algorithm(*algorithm), secret))
        }
        (AlgorithmFamily::Rsa, DecodingKeyKind::RsaModulusExponent { n, e }) => {
            VerifyingKey::RsaComponents(rsa_parameters(*algorithm), n.clone(), e.clone())
        }
        (AlgorithmFamily::Rsa, DecodingKeyKind::SecretOrDer(der)) => {
            VerifyingKey::Public(rsa_parameters(*algorithm), der.clone())
        }
        (AlgorithmFamily::Ec, DecodingKeyKind::SecretOrDer(point)) => {
            let algorithm: &'static dyn sig::VerificationAlgorithm = match algorithm {
                Algorithm::ES384 => &sig::ECDSA_P384_SHA384_FIXED,
                _ => &sig::ECDSA_P256_SHA256_FIXED,
            };
            VerifyingKey::Public(algorithm, point.clone())
        }
        (AlgorithmFamily::Ed, DecodingKeyKind::SecretOrDer(public)) => {
            VerifyingKey::Public(&sig::ED25519, public.clone())
        }
        _ => return Err(ErrorKind::InvalidKeyFormat.into()),
    };
    Ok(Box::new(RingVerifier {
        algorithm: *algorithm,
        key,
    }))
}

fn hmac_algorithm(algorithm: Algorithm) -> hmac::Algorithm {
    match algorithm {
        Algorithm::HS384 => hmac::HMAC_SHA384,
        Algorithm::HS512 => hmac::HMAC_SHA512,
        _ => hmac::HMAC_SHA256,
    }
}

fn rsa_padding(algorithm: Algorithm) -> &'static dyn sig::RsaEncoding {
    match algorithm {
        Algorithm::RS384 => &sig::RSA_PKCS1_SHA384,
        Algorithm::RS512 => &sig::RSA_PKCS1_SHA512,
        Algorithm::PS256 => &sig::RSA_PSS_SHA256,
        Algorithm::PS384 => &sig::RSA_PSS_SHA384,
        Algorithm::PS512 => &sig::RSA_PSS_SHA512,
        _ => &sig::RSA_PKCS1_SHA256,
    }
}

fn rsa_parameters(algorithm: Algorithm) -> &'static sig::RsaParameters {
    match algorithm {
        Algorithm::RS384 => &sig::RSA_PKCS1_2048_8192_SHA384,
        Algorithm::RS512 => &sig::RSA_PKCS1_2048_8192_SHA512,
        Algorithm::PS256 => &sig::RSA_PSS_2048_8192_SHA256,
        Algorithm::PS384 => &sig::RSA_PSS_2048_8192_SHA384,
        Algorithm::PS512 => &sig::RSA_PSS_2048_8192_SHA512,
        _ => &sig::RSA_PKCS1_2048_8192_SHA256,
    }
}

/// An RSA private key as `jsonwebtoken` hands it over: PKCS#1 DER (what its
/// PEM reader extracts), or PKCS#8 DER (given to `EncodingKey::from_rsa_der`).
fn rsa_key_pair(der: &[u8]) -> Result<RsaKeyPair> {
    RsaKeyPair::from_der(der)
        .or_else(|_| RsaKeyPair::from_pkcs8(der))
        .map_err(|e| ErrorKind::InvalidRsaKey(e.to_string()).into())
}

fn ecdsa_key_pair(algorithm: Algorithm, pkcs8: &[u8]) -> Result<EcdsaKeyPair> {
    let signing = match algorithm {
        Algorithm::ES384 => &sig::ECDSA_P384_SHA384_FIXED_SIGNING,
        _ => &sig::ECDSA_P256_SHA256_FIXED_SIGNING,
    };
    EcdsaKeyPair::from_pkcs8(signing, pkcs8, &SystemRandom::new()).map_err(|_| ErrorKind::InvalidEcdsaKey.into())
}

fn rsa_components_from_private_key(der: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
    let pair = rsa_key_pair(der)?;
    let public = sig::RsaPublicKeyComponents::<Vec<u8>>::from(pair.public());
    Ok((public.n, public.e))
}

/// *ring* parses an RSA public key only to verify with it, never to hand
/// out its components; draftline never derives a JWK from a DER public key
/// (its JWKs come from the identity provider), so this is refused plainly.
fn rsa_components_from_public_key(_der: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
    Err(Error::from(ErrorKind::InvalidRsaKey(
        "the components of a DER public key are not extracted by the ring provider".to_owned(),
    )))
}

fn ec_components_from_private_key(pkcs8: &[u8], algorithm: Algorithm) -> Result<(EllipticCurve, Vec<u8>, Vec<u8>)> {
    let (curve, coordinate_len) = match algorithm {
        Algorithm::ES256 => (EllipticCurve::P256, 32),
        Algorithm::ES384 => (EllipticCurve::P384, 48),
        _ => return Err(ErrorKind::InvalidEcdsaKey.into()),
    };
    let pair = ecdsa_key_pair(algorithm, pkcs8)?;
    // An uncompressed point: 0x04, then x, then y.
    match pair.public_key().as_ref().split_first() {
        Some((4, xy)) if xy.len() == 2 * coordinate_len => {
            let (x, y) = xy.split_at(coordinate_len);
            Ok((curve, x.to_vec(), y.to_vec()))
        }
        _ => Err(ErrorKind::InvalidEcdsaKey.into()),
    }
}

fn ed_component_from_private_key(pkcs8: &[u8], curve: &EllipticCurve) -> Result<Vec<u8>> {
    match curve {
        EllipticCurve::Ed25519 => Ok(Ed25519KeyPair::from_pkcs8_maybe_unchecked(pkcs8)
            .map_err(|_| ErrorKind::InvalidEddsaKey)?
            .public_key()
            .as_ref()
            .to_vec()),
        _ => Err(ErrorKind::InvalidAlgorithm.into()),
    }
}

fn compute_digest(data: &[u8], hash: ThumbprintHash) -> Result<Vec<u8>> {
    let algorithm = match hash {
        ThumbprintHash::SHA256 => &digest::SHA256,
        ThumbprintHash::SHA384 => &digest::SHA384,
        ThumbprintHash::SHA512 => &digest::SHA512,
        _ => return Err(ErrorKind::InvalidAlgorithm.into()),
    };
    Ok(digest::digest(algorithm, data).as_ref().to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{Header, Validation, decode, encode};
    use serde_json::{Value, json};

    fn install() {
        super::super::install_crypto_provider();
    }

    fn round_trip(algorithm: Algorithm, signing: &EncodingKey, verifying: &DecodingKey) -> Result<Value> {
        let claims = json!({"sub": "buyer-sby", "exp": 4_000_000_000_u64});
        let token = encode(&Header::new(algorithm), &claims, signing)?;
        let mut validation = Validation::new(algorithm);
        validation.required_spec_claims.clear();
        decode::<Value>(&token, verifying, &validation).map(|data| data.claims)
    }

    #[test]
    fn hmac_tokens_verify_with_their_secret_only() {
        install();
        for algorithm in [Algorithm::HS256, Algorithm::HS384, Algorithm::HS512] {
            let claims = round_trip(
                algorithm,
                &EncodingKey::from_secret(b"a secret of the deployment").unwrap(),
                &DecodingKey::from_secret(b"a secret of the deployment").unwrap(),
            )
            .unwrap();
            assert_eq!(claims["sub"], "buyer-sby");
            let wrong = round_trip(
                algorithm,
                &EncodingKey::from_secret(b"a secret of the deployment").unwrap(),
                &DecodingKey::from_secret(b"another secret").unwrap(),
            );
            assert_eq!(wrong.unwrap_err().kind(), &ErrorKind::InvalidSignature);
        }
    }

    #[test]
    fn ecdsa_tokens_verify_through_the_jwk_of_their_key_and_not_another() {
        install();
        let rng = SystemRandom::new();
        for (algorithm, signing) in [
            (Algorithm::ES256, &sig::ECDSA_P256_SHA256_FIXED_SIGNING),
            (Algorithm::ES384, &sig::ECDSA_P384_SHA384_FIXED_SIGNING),
        ] {
            let pkcs8 = EcdsaKeyPair::generate_pkcs8(signing, &rng).unwrap();
            let other = EcdsaKeyPair::generate_pkcs8(signing, &rng).unwrap();
            let key = EncodingKey::from_ec_der(pkcs8.as_ref());
            let jwk = jsonwebtoken::jwk::Jwk::from_encoding_key(&key, algorithm).unwrap();
            let claims = round_trip(algorithm, &key, &DecodingKey::from_jwk(&jwk).unwrap()).unwrap();
            assert_eq!(claims["sub"], "buyer-sby");
            let other_jwk =
                jsonwebtoken::jwk::Jwk::from_encoding_key(&EncodingKey::from_ec_der(other.as_ref()), algorithm)
                    .unwrap();
            let wrong = round_trip(algorithm, &key, &DecodingKey::from_jwk(&other_jwk).unwrap());
            assert_eq!(wrong.unwrap_err().kind(), &ErrorKind::InvalidSignature);
        }
    }

    /// A 2048-bit RSA key made for these tests only (`openssl genrsa`), and
    /// its public key (PKCS#1, as `jsonwebtoken`'s PEM reader hands both over).
    const RSA_PRIVATE: &str = include_str!("test-rsa-2048.pem");
    const RSA_PUBLIC: &str = include_str!("test-rsa-2048.pub.pem");

    #[test]
    fn rsa_tokens_verify_through_the_jwk_and_the_public_key_and_a_changed_one_never() {
        install();
        let key = EncodingKey::from_rsa_pem(RSA_PRIVATE.as_bytes()).unwrap();
        let public = DecodingKey::from_rsa_pem(RSA_PUBLIC.as_bytes()).unwrap();
        for algorithm in [
            Algorithm::RS256,
            Algorithm::RS384,
            Algorithm::RS512,
            Algorithm::PS256,
            Algorithm::PS384,
            Algorithm::PS512,
        ] {
            // The JWK's n and e come from the private key (KeyUtils).
            let jwk = jsonwebtoken::jwk::Jwk::from_encoding_key(&key, algorithm).unwrap();
            let through_jwk = DecodingKey::from_jwk(&jwk).unwrap();
            for verifying in [&through_jwk, &public] {
                let claims = round_trip(algorithm, &key, verifying).unwrap();
                assert_eq!(claims["sub"], "buyer-sby", "{algorithm:?}");
            }
            let token = encode(&Header::new(algorithm), &json!({"sub": "buyer-sby"}), &key).unwrap();
            let (signed, signature) = token.rsplit_once('.').unwrap();
            let changed = format!("{signed}x.{signature}");
            let mut validation = Validation::new(algorithm);
            validation.required_spec_claims.clear();
            let err = decode::<Value>(&changed, &public, &validation).unwrap_err();
            assert_eq!(err.kind(), &ErrorKind::InvalidSignature, "{algorithm:?}");
        }
    }

    #[test]
    fn ed25519_tokens_verify_with_their_public_key() {
        install();
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
        let public = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref())
            .unwrap()
            .public_key()
            .as_ref()
            .to_vec();
        let claims = round_trip(
            Algorithm::EdDSA,
            &EncodingKey::from_ed_der(pkcs8.as_ref()),
            &DecodingKey::from_ed_der(&public),
        )
        .unwrap();
        assert_eq!(claims["sub"], "buyer-sby");
    }

    #[test]
    fn the_provider_never_uses_a_key_of_one_family_for_another_familys_algorithm() {
        // jsonwebtoken checks this before it asks the provider; the
        // provider checks again, so a caller of the factories is held too.
        let secret = EncodingKey::from_secret(b"a secret").unwrap();
        for algorithm in [Algorithm::RS256, Algorithm::ES256, Algorithm::EdDSA] {
            let err = (PROVIDER.signer_factory)(&algorithm, &secret).err().unwrap();
            assert_eq!(err.kind(), &ErrorKind::InvalidKeyFormat);
        }
        let point = DecodingKey::from_ec_components("AAAA", "AAAA").unwrap();
        for algorithm in [Algorithm::HS256, Algorithm::RS256, Algorithm::EdDSA] {
            let err = (PROVIDER.verifier_factory)(&algorithm, &point).err().unwrap();
            assert_eq!(err.kind(), &ErrorKind::InvalidKeyFormat);
        }
        let rsa = DecodingKey::from_rsa_raw_components(&[0xc5; 256], &[1, 0, 1]);
        let err = (PROVIDER.verifier_factory)(&Algorithm::ES256, &rsa).err().unwrap();
        assert_eq!(err.kind(), &ErrorKind::InvalidKeyFormat);
    }

    #[test]
    fn digests_are_the_named_sha2() {
        let empty_sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        assert_eq!(
            hex::encode(compute_digest(b"", ThumbprintHash::SHA256).unwrap()),
            empty_sha256
        );
        assert_eq!(compute_digest(b"", ThumbprintHash::SHA384).unwrap().len(), 48);
        assert_eq!(compute_digest(b"", ThumbprintHash::SHA512).unwrap().len(), 64);
    }
}
