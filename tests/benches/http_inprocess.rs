//! `cargo bench -p tool-tests --bench http_inprocess`
//!
//! The HTTP front end's cost per request without the network: the same request handled by the
//! full router (middleware, pipeline, envelope), by `http::tool_route`, and by a hand-written
//! axum handler, through `tower::ServiceExt::oneshot` on one thread. The loopback benchmark
//! (`--bench http`) measures throughput; this one says where the time goes. The `authentication`
//! group adds what a static token and an OAuth JWT cost per request.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tool_runtime::{Caller, Source};
use tower::ServiceExt;

#[path = "common/add.rs"]
mod add;

use add::request;

fn per_request(c: &mut Criterion) {
    let rt = add::runtime();
    let registry = add::registry();
    let apps = add::apps(&registry);
    let mut group = c.benchmark_group("http in-process: POST /tools/add");
    for (name, app) in apps {
        group.bench_function(name, |b| {
            b.to_async(&rt).iter(|| {
                let app = app.clone();
                async move {
                    let r = app.oneshot(request()).await.unwrap();
                    black_box(axum::body::to_bytes(r.into_body(), 1 << 20).await.unwrap())
                }
            });
        });
    }
    group.bench_function("pipeline alone: Registry::call + serialize", |b| {
        b.to_async(&rt).iter(|| async {
            let e = registry
                .call("add", json!({"a": 20, "b": 22}), Caller::new(Source::Http))
                .await;
            black_box(serde_json::to_vec(&e).unwrap())
        });
    });
    group.finish();
}

/// The cost of authenticating a request: none, a static token, and OAuth JWTs (RS256, ES256)
/// checked against keys in hand, as a fetched key set is after its first use: on every request,
/// and with the verdict kept (the default), as for a client sending one token many times.
fn authentication(c: &mut Criterion) {
    use tool_runtime::http::{self, Auth, OAuth, ServerOptions};
    let rt = add::runtime();
    let registry = add::registry();
    let resource = "https://tools.example/mcp";
    let issuer = "https://sso.example/realms/tools";
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = json!({"iss": issuer, "aud": resource, "sub": "ada", "exp": now + 3600, "scope": "devices:read"});
    let jwt = |alg: &'static rcgen::SignatureAlgorithm, jwt_alg, lifetime| {
        let key = rcgen::KeyPair::generate_for(alg).unwrap();
        let encoding = match jwt_alg {
            jsonwebtoken::Algorithm::RS256 => {
                jsonwebtoken::EncodingKey::from_rsa_pem(key.serialize_pem().as_bytes())
            }
            _ => jsonwebtoken::EncodingKey::from_ec_pem(key.serialize_pem().as_bytes()),
        }
        .unwrap();
        let token =
            jsonwebtoken::encode(&jsonwebtoken::Header::new(jwt_alg), &claims, &encoding).unwrap();
        let oauth = OAuth::builder(issuer, resource)
            .public_key_pem(key.public_key_pem())
            .verdict_lifetime(lifetime)
            .build()
            .unwrap();
        (
            http::router(registry.clone(), ServerOptions::default().oauth(oauth)),
            token,
        )
    };
    let auth =
        Auth::from_toml("[[tokens]]\ntoken = \"static-token\"\nprincipal = \"ops\"\n").unwrap();
    let apps = [
        (
            "no authentication",
            http::router(registry.clone(), ServerOptions::default()),
            String::new(),
        ),
        (
            "static token",
            http::router(registry.clone(), ServerOptions::default().auth(auth)),
            "static-token".to_owned(),
        ),
        {
            let (app, token) = jwt(
                &rcgen::PKCS_RSA_SHA256,
                jsonwebtoken::Algorithm::RS256,
                Duration::ZERO,
            );
            (
                "OAuth JWT, RS256 (2048-bit key), checked every time",
                app,
                token,
            )
        },
        {
            let (app, token) = jwt(
                &rcgen::PKCS_ECDSA_P256_SHA256,
                jsonwebtoken::Algorithm::ES256,
                Duration::ZERO,
            );
            ("OAuth JWT, ES256, checked every time", app, token)
        },
        {
            let (app, token) = jwt(
                &rcgen::PKCS_RSA_SHA256,
                jsonwebtoken::Algorithm::RS256,
                Duration::from_secs(60),
            );
            (
                "OAuth JWT, RS256, its verdict kept (the default)",
                app,
                token,
            )
        },
    ];
    let mut group = c.benchmark_group("http in-process: authentication of POST /tools/add");
    for (name, app, token) in apps {
        group.bench_function(name, |b| {
            b.to_async(&rt).iter(|| {
                let app = app.clone();
                let mut request = request();
                if !token.is_empty() {
                    request
                        .headers_mut()
                        .insert("authorization", format!("Bearer {token}").parse().unwrap());
                }
                async move {
                    let r = app.oneshot(request).await.unwrap();
                    assert_eq!(r.status(), 200);
                    black_box(axum::body::to_bytes(r.into_body(), 1 << 20).await.unwrap())
                }
            });
        });
    }
    group.finish();
}

criterion_group!(benches, per_request, authentication);
criterion_main!(benches);
