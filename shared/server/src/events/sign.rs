//! Standard Webhooks signatures: `v1,` and the base64 of HMAC-SHA256 over
//! `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the secret's
//! bytes (`whsec_` and their base64). During a rotation an endpoint has
//! two secrets, and each delivery carries both signatures, separated by a
//! space: a receiver holding either one verifies it.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The prefix of a secret.
const PREFIX: &str = "whsec_";

/// A signing secret's bytes: 24 to 64 of them.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Vec<u8>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl Secret {
    /// The secret `text` writes (`whsec_` and base64), or what is wrong
    /// with it. The message never repeats the text.
    pub fn parse(text: &str) -> Result<Self, String> {
        let Some(encoded) = text.strip_prefix(PREFIX) else {
            return Err("a secret starts with whsec_ (whsec_ and the base64 of 24 to 64 random bytes)".to_owned());
        };
        let bytes = STANDARD
            .decode(encoded)
            .map_err(|_| "after whsec_, a secret is standard base64 (A-Z, a-z, 0-9, +, /, = padding)".to_owned())?;
        if !(24..=64).contains(&bytes.len()) {
            return Err(format!(
                "a secret holds 24 to 64 random bytes; this one holds {}",
                bytes.len()
            ));
        }
        Ok(Self(bytes))
    }

    /// A new random secret, as its text.
    pub fn generate() -> String {
        let bytes: [u8; 32] = rand::random();
        format!("{PREFIX}{}", STANDARD.encode(bytes))
    }

    /// `v1,<signature>` of one delivery.
    fn sign(&self, signed: &[u8]) -> String {
        // HMAC takes a key of any length.
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).unwrap_or_else(|_| unreachable!());
        mac.update(signed);
        format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
    }
}

/// The `webhook-signature` header of the delivery of `body` as `id` at
/// `timestamp` (epoch seconds): one signature per secret.
pub fn signature(secrets: &[Secret], id: &str, timestamp: i64, body: &[u8]) -> String {
    let mut signed = Vec::with_capacity(id.len() + 12 + body.len());
    signed.extend_from_slice(id.as_bytes());
    signed.push(b'.');
    signed.extend_from_slice(timestamp.to_string().as_bytes());
    signed.push(b'.');
    signed.extend_from_slice(body);
    secrets
        .iter()
        .map(|secret| secret.sign(&signed))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_specifications_example_signs_as_it_says() {
        // The example of the Standard Webhooks specification and of its
        // reference libraries' tests.
        let secret = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            signature(&[secret], "msg_p5jXN8AQM9LWM0D4loKWxJek", 1_614_265_330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn a_rotation_signs_with_each_secret_and_a_bad_secret_is_named_not_echoed() {
        let (old, new) = (
            Secret::parse(&Secret::generate()).unwrap(),
            Secret::parse(&Secret::generate()).unwrap(),
        );
        let both = signature(&[old.clone(), new.clone()], "evt_1", 1, b"{}");
        assert_eq!(
            both,
            format!(
                "{} {}",
                signature(&[old], "evt_1", 1, b"{}"),
                signature(&[new], "evt_1", 1, b"{}")
            )
        );
        for bad in ["hunter2", "whsec_!!!!", "whsec_c2hvcnQ="] {
            let problem = Secret::parse(bad).unwrap_err();
            assert!(!problem.contains(bad), "{problem}");
        }
        assert!(format!("{:?}", Secret::parse(&Secret::generate()).unwrap()) == "Secret(..)");
    }
}
