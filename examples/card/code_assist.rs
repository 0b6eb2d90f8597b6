//! The "CodeAssist Pro" card from the Agent Card schema reference, built with the builder.
//!
//! The reference card is an A2A 0.2-era document; this is its faithful 1.0 form: its 0.1
//! `authentication` (bearer or OAuth 2.0) becomes security schemes and requirements, its mode
//! names `text` and `file` become the media types `text/plain` and `application/octet-stream`,
//! and the provider's `contactEmail`, which no A2A version defines, is left out.

use a2a_card::{AgentCard, AgentSkill, OAuthFlow, SecurityRequirement, SecurityScheme};

const TEXT: &str = "text/plain";
const FILE: &str = "application/octet-stream";

/// The card, built with the builder (the tests check it against the official schemas).
pub fn code_assist_pro() -> AgentCard {
    AgentCard::builder(
        "CodeAssist Pro",
        "AI-powered code assistant for development teams",
        "2.1.0",
    )
    .jsonrpc("https://codeassist.example.com")
    .documentation_url("https://docs.codeassist.example.com")
    .provider("DevTools Inc", "https://devtools.example.com")
    .streaming(true)
    .push_notifications(true)
    .state_transition_history(true)
    .extended_agent_card(true)
    .skill(
        AgentSkill::builder(
            "code-review",
            "Code Review",
            "Reviews code for bugs, style issues, and security vulnerabilities",
        )
        .tags(["code", "review", "security"])
        .example("Review this function for potential bugs")
        .example("Check for security vulnerabilities")
        .input_mode(TEXT)
        .input_mode(FILE)
        .output_mode(TEXT),
    )
    .skill(
        AgentSkill::builder(
            "code-generation",
            "Code Generation",
            "Generates code from natural language descriptions",
        )
        .tags(["code", "generation", "ai"])
        .example("Write a Python function to sort a list")
        .example("Create a REST API endpoint")
        .input_mode(TEXT)
        .output_mode(TEXT)
        .output_mode(FILE),
    )
    .skill(
        AgentSkill::builder(
            "documentation",
            "Documentation",
            "Generates documentation for code",
        )
        .tags(["docs", "documentation"])
        .input_mode(TEXT)
        .input_mode(FILE)
        .output_mode(TEXT),
    )
    .security_scheme("bearer", SecurityScheme::bearer(Some("JWT")))
    .security_scheme(
        "oauth2",
        SecurityScheme::oauth2(
            OAuthFlow::authorization_code(
                "https://auth.codeassist.example.com/authorize",
                "https://auth.codeassist.example.com/token",
            )
            .scope("code:read", "Read code submitted for review")
            .scope("code:write", "Generate code and documentation"),
        ),
    )
    .security_requirement(SecurityRequirement::scheme("bearer", Vec::<String>::new()))
    .security_requirement(SecurityRequirement::scheme("oauth2", ["code:read"]))
    .build()
    .unwrap_or_else(|e| panic!("the CodeAssist Pro card is valid: {e}"))
}
