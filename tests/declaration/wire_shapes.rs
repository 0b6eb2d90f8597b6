//! Shapes the reader accepts beyond the three profiles, each normalised into the one model.

use a2a_card::wire::{CardError, Profile, RenderOptions, SchemaPlacement};
use a2a_card::{AgentCard, IO_SCHEMAS_EXTENSION_URI, SecurityRequirement, SecurityScheme};
use serde_json::json;

fn base() -> serde_json::Value {
    json!({
        "name": "Shapes", "description": "Exercises every shape the reader accepts.", "version": "1.0.0",
        "url": "https://shapes.example.com/a2a", "protocolVersion": "0.3.0",
        "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "A skill.", "tags": []}]
    })
}

#[test]
fn the_0_1_authentication_object_becomes_schemes_and_requirements() {
    let mut doc = base();
    doc["authentication"] =
        json!({"schemes": ["bearer", "oauth2", "apiKey", "none"], "credentials": "header"});
    let card = AgentCard::from_json(&doc).unwrap();
    assert!(
        matches!(&card.security_schemes["bearer"], SecurityScheme::Http(h) if h.scheme == "bearer")
    );
    assert!(matches!(
        &card.security_schemes["oauth2"],
        SecurityScheme::OAuth2(_)
    ));
    assert!(
        matches!(&card.security_schemes["apiKey"], SecurityScheme::ApiKey(k) if k.location == "header")
    );
    assert!(!card.security_schemes.contains_key("none"));
    // Alternatives: any one of them.
    assert_eq!(
        card.security_requirements,
        vec![
            SecurityRequirement::scheme("bearer", Vec::<String>::new()),
            SecurityRequirement::scheme("oauth2", Vec::<String>::new()),
            SecurityRequirement::scheme("apiKey", Vec::<String>::new()),
        ]
    );
    assert!(
        !card.extra.contains_key("authentication"),
        "fully normalised"
    );
    // The linter then asks for what 0.1 never said (the OAuth flow, the API key's name).
    let codes: Vec<_> = a2a_card::lint::lint(&card, Profile::V1)
        .iter()
        .map(|f| f.rule.code())
        .collect();
    assert!(
        codes.contains(&"oauth-flow-count") && codes.contains(&"security-scheme-incomplete"),
        "{codes:?}"
    );
}

#[test]
fn bare_array_requirements_and_snake_case_names_are_read() {
    let doc = json!({
        "name": "Go", "description": "A card in the shape a2a-go and proto field names give.", "version": "1.0.0",
        "supported_interfaces": [{"url": "https://go.example.com", "protocol_binding": "JSONRPC", "protocol_version": "1.0"}],
        "capabilities": {"push_notifications": true, "extended_agent_card": false},
        "default_input_modes": ["text/plain"], "default_output_modes": ["text/plain"],
        "security_schemes": {"oidc": {"open_id_connect_security_scheme": {"open_id_connect_url": "https://id.example.com/.well-known/openid-configuration"}}},
        "security_requirements": [{"schemes": {"oidc": ["openid"]}}],
        "skills": [{"id": "s", "name": "S", "description": "A skill.", "input_modes": ["text/plain"],
                    "securityRequirements": [{"oidc": {"list": ["profile"]}}]}]
    });
    assert_eq!(Profile::detect(&doc), Profile::V1);
    let card = AgentCard::from_json(&doc).unwrap();
    assert_eq!(card.interfaces[0].url, "https://go.example.com");
    assert_eq!(card.capabilities.push_notifications, Some(true));
    assert_eq!(card.default_input_modes, ["text/plain"]);
    assert_eq!(
        card.security_requirements,
        vec![SecurityRequirement::scheme("oidc", ["openid"])]
    );
    assert_eq!(
        card.skills[0].security_requirements,
        vec![SecurityRequirement::scheme("oidc", ["profile"])]
    );
    assert_eq!(card.skills[0].input_modes, ["text/plain"]);
    assert!(
        matches!(&card.security_schemes["oidc"], SecurityScheme::OpenIdConnect(o) if o.open_id_connect_url.starts_with("https://id."))
    );
    assert!(
        card.extra.is_empty() && card.skills[0].extra.is_empty(),
        "nothing unread"
    );
}

#[test]
fn unknown_fields_are_kept_and_written_back() {
    let mut doc = base();
    doc["x-team"] = json!("search");
    doc["provider"] = json!({"organization": "Acme", "url": "https://acme.example.com", "contactEmail": "a2a@acme.example.com"});
    doc["skills"][0]["x-cost"] = json!(3);
    let card = AgentCard::from_json(&doc).unwrap();
    assert_eq!(card.extra["x-team"], "search");
    for profile in Profile::ALL {
        let out = card.to_json(profile);
        assert_eq!(out["x-team"], "search", "{profile}");
        assert_eq!(
            out["provider"]["contactEmail"], "a2a@acme.example.com",
            "{profile}"
        );
        assert_eq!(out["skills"][0]["x-cost"], 3, "{profile}");
    }
    let pointers: Vec<_> = a2a_card::lint::lint_json(&doc)
        .into_iter()
        .filter(|f| f.rule.code() == "unknown-field")
        .map(|f| f.pointer)
        .collect();
    assert_eq!(
        pointers,
        ["/x-team", "/provider/contactEmail", "/skills/0/x-cost"]
    );
}

#[test]
fn wrong_types_are_all_reported_with_pointers() {
    let mut doc = base();
    doc["name"] = json!(7);
    doc["skills"][0]["tags"] = json!(["ok", false]);
    doc["capabilities"]["streaming"] = json!("yes");
    let Err(CardError::Invalid(issues)) = AgentCard::from_json(&doc) else {
        panic!("should fail")
    };
    let pointers: Vec<_> = issues.iter().map(|i| i.pointer.as_str()).collect();
    assert_eq!(
        pointers,
        ["/name", "/capabilities/streaming", "/skills/0/tags/1"]
    );
    assert!(
        issues[0]
            .message
            .contains("expected a string, found a number")
    );
}

#[test]
fn schemas_in_extension_params_read_back_into_the_model() {
    let doc = json!({
        "name": "P", "description": "Schemas placed for strict consumers.", "version": "1.0.0",
        "supportedInterfaces": [{"url": "https://p.example.com", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"extensions": [{"uri": IO_SCHEMAS_EXTENSION_URI, "params": {"schemas": {"q": {"type": "object"}}}}]},
        "skills": [{"id": "s", "name": "S", "description": "A skill.", "inputModes": ["application/json;schema=q"]}]
    });
    let card = AgentCard::from_json(&doc).unwrap();
    assert_eq!(card.schemas["q"], json!({"type": "object"}));
    assert_eq!(card.capabilities.extensions[0].params, None);
    let strict = card
        .to_json_with(&RenderOptions::new(Profile::V1).schemas(SchemaPlacement::ExtensionParams));
    assert_eq!(strict, doc);
    assert_eq!(card.to_json(Profile::V1)["schemas"]["q"]["type"], "object");
}

#[test]
fn compat_security_schemes_hold_both_shapes_and_read_back() {
    let card = AgentCard::builder(
        "Keys",
        "An agent that takes an API key in a header.",
        "1.0.0",
    )
    .jsonrpc("https://keys.example.com/a2a")
    .security_scheme(
        "key",
        SecurityScheme::api_key(a2a_card::ApiKeyLocation::Header, "X-API-Key"),
    )
    .security_requirement(SecurityRequirement::scheme("key", Vec::<String>::new()))
    .skill(a2a_card::AgentSkill::builder("k", "K", "Checks keys."))
    .build_unchecked();
    let compat = card.to_json(Profile::Compat);
    assert_eq!(
        compat["securitySchemes"]["key"],
        json!({"type": "apiKey", "in": "header", "name": "X-API-Key",
               "apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}})
    );
    assert_eq!(compat["security"], json!([{"key": []}]));
    assert_eq!(
        compat["securityRequirements"],
        json!([{"schemes": {"key": {"list": []}}}])
    );
    assert_eq!(AgentCard::from_json(&compat).unwrap(), card);
    assert_eq!(
        card.to_json(Profile::V0_3)["securitySchemes"]["key"],
        json!({"type": "apiKey", "in": "header", "name": "X-API-Key"})
    );
}

#[test]
fn serde_round_trip_uses_the_1_0_profile() {
    let card = AgentCard::from_json(&base()).unwrap();
    let text = serde_json::to_string(&card).unwrap();
    assert!(text.contains("supportedInterfaces"));
    let back: AgentCard = serde_json::from_str(&text).unwrap();
    assert_eq!(back, card);
}

#[test]
fn nothing_is_dropped_silently() {
    // Keys beside a 1.0 wrapper key.
    let mut doc = base();
    doc["securitySchemes"] =
        json!({"k": {"apiKeySecurityScheme": {"location": "header", "name": "K"}, "x-extra": 1}});
    let Err(CardError::Invalid(issues)) = AgentCard::from_json(&doc) else {
        panic!("should fail")
    };
    assert_eq!(issues[0].pointer, "/securitySchemes/k/x-extra");
    // A scheme with neither a wrapper key nor a type.
    doc["securitySchemes"] = json!({"oauth": {}});
    let Err(CardError::Invalid(issues)) = AgentCard::from_json(&doc) else {
        panic!("should fail")
    };
    assert_eq!(issues[0].pointer, "/securitySchemes/oauth");
    assert!(issues[0].message.contains("wrapper key"));
    // A scope list object without `list`.
    doc.as_object_mut().unwrap().remove("securitySchemes");
    doc["securityRequirements"] = json!([{"schemes": {"k": {"scopes": ["a"]}}}]);
    let Err(CardError::Invalid(issues)) = AgentCard::from_json(&doc) else {
        panic!("should fail")
    };
    assert_eq!(
        issues[0].pointer,
        "/securityRequirements/0/schemes/k/scopes"
    );
    // An empty 1.0 interface list does not hide the 0.3 url.
    let mut doc = base();
    doc["supportedInterfaces"] = json!([]);
    assert_eq!(
        AgentCard::from_json(&doc).unwrap().interfaces[0].url,
        "https://shapes.example.com/a2a"
    );
}

#[test]
fn unknown_keys_inside_oauth_flows_are_reported_where_they_are() {
    let mut doc = base();
    doc["securitySchemes"] = json!({"o": {"type": "oauth2", "flows": {"x": 1, "client_credentials": {"token_url": "https://t.example.com", "scopes": {}, "y": 2}}}});
    let unknown: Vec<_> = a2a_card::lint::lint_json(&doc)
        .into_iter()
        .filter(|f| f.rule.code() == "unknown-field")
        .map(|f| f.pointer)
        .collect();
    assert_eq!(
        unknown,
        [
            "/securitySchemes/o/flows/x",
            "/securitySchemes/o/flows/client_credentials/y"
        ]
    );
}
