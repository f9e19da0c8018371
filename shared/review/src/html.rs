//! Writing HTML: every value from storage or a request goes through
//! [`text`] or [`attr`] (a vendor note `<script>` shows as text), and every
//! page through [`layout`]. No scripts, no external assets: one stylesheet
//! of this origin.

use std::fmt::{self, Display, Write};

use chrono::{DateTime, Utc};

/// `value` escaped for an element's text (`&`, `<`, `>`).
pub fn text(value: &str) -> Text<'_> {
    Text(value)
}

/// `value` escaped for a quoted attribute (`&`, `<`, `>`, `"`, `'`).
pub fn attr(value: &str) -> Attr<'_> {
    Attr(value)
}

/// Text escaped on display.
pub struct Text<'a>(&'a str);

/// An attribute value escaped on display.
pub struct Attr<'a>(&'a str);

fn escape(f: &mut fmt::Formatter<'_>, value: &str, quotes: bool) -> fmt::Result {
    let mut rest = value;
    while let Some(at) = rest.find(|c: char| matches!(c, '&' | '<' | '>') || (quotes && matches!(c, '"' | '\''))) {
        f.write_str(&rest[..at])?;
        let (c, tail) = rest[at..].split_at(1);
        f.write_str(match c {
            "&" => "&amp;",
            "<" => "&lt;",
            ">" => "&gt;",
            "\"" => "&#34;",
            _ => "&#39;",
        })?;
        rest = tail;
    }
    f.write_str(rest)
}

impl Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        escape(f, self.0, false)
    }
}

impl Display for Attr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        escape(f, self.0, true)
    }
}

/// What the header of a page shows about who is signed in.
pub struct Header<'a> {
    /// The person and their branch, when signed in.
    pub person: Option<(&'a str, &'a str)>,
    /// The CSRF token for the sign-out form.
    pub csrf: Option<&'a str>,
}

/// A whole page: `title`, the header, and `main` (already escaped HTML).
pub fn layout(title: &str, header: &Header<'_>, main: &str) -> String {
    let mut page = String::with_capacity(main.len() + 2048);
    let _ = write!(
        page,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{} · draftline review</title>\n\
         <link rel=\"stylesheet\" href=\"/review/assets/review.css\">\n</head>\n<body>\n\
         <a class=\"skip\" href=\"#main\">Skip to content</a>\n\
         <header class=\"top\"><a class=\"brand\" href=\"/review\">draftline <span>review</span></a>",
        text(title)
    );
    if let Some((user, branch)) = header.person {
        let _ = write!(
            page,
            "<nav aria-label=\"Main\"><a href=\"/review\">Queue</a></nav>\
             <div class=\"who\"><span>{} · {}</span>",
            text(user),
            text(branch)
        );
        if let Some(csrf) = header.csrf {
            let _ = write!(
                page,
                "<form method=\"post\" action=\"/review/signout\"><input type=\"hidden\" name=\"csrf\" \
                 value=\"{}\"><button type=\"submit\" class=\"link\">Sign out</button></form>",
                attr(csrf)
            );
        }
        page.push_str("</div>");
    }
    let _ = write!(
        page,
        "</header>\n<main id=\"main\">\n{main}\n</main>\n</body>\n</html>\n"
    );
    page
}

/// A status as a badge: colour and the word, never colour alone.
pub fn status_badge(status: &str) -> String {
    let class = match status {
        "draft" => "draft",
        "approved" => "approved",
        "rejected" | "cancelled" => "rejected",
        "sent" | "received" => "done",
        _ => "other",
    };
    let label = match status {
        "draft" => "Waiting for review",
        "approved" => "Approved",
        "rejected" => "Rejected",
        "cancelled" => "Cancelled",
        "sent" => "Sent",
        "received" => "Received",
        other => other,
    };
    format!(
        "<span class=\"badge status-{class}\"><span class=\"dot\" aria-hidden=\"true\"></span>{}</span>",
        text(label)
    )
}

/// A call's outcome as a badge.
pub fn outcome_badge(outcome: &str) -> String {
    let (class, label) = match outcome {
        "ok" => ("approved", "OK"),
        "replayed" => ("done", "Replayed"),
        "denied" => ("rejected", "Denied"),
        "tool_error" => ("failed", "Failed"),
        "input_required" => ("draft", "Asked a person"),
        other => ("other", other),
    };
    format!(
        "<span class=\"badge status-{class}\"><span class=\"dot\" aria-hidden=\"true\"></span>{}</span>",
        text(label)
    )
}

/// The "Drafted by agent" badge.
pub const AGENT_BADGE: &str = "<span class=\"badge agent\">Drafted by agent</span>";

/// An amount with thousands separators and its currency (`3,336,000.00 IDR`).
pub fn money(amount: &str, currency: &str) -> String {
    let (sign, digits) = amount.strip_prefix('-').map_or(("", amount), |d| ("-", d));
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return format!("{} {}", text(amount), text(currency));
    }
    let mut grouped = String::with_capacity(whole.len() + whole.len() / 3);
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let fraction = if fraction.is_empty() {
        String::new()
    } else {
        format!(".{}", text(fraction))
    };
    format!("{sign}{grouped}{fraction}&nbsp;{}", text(currency))
}

/// An RFC 3339 time as `<time>`: ISO date and time in UTC.
pub fn time(rfc3339: &str) -> String {
    match DateTime::parse_from_rfc3339(rfc3339) {
        Ok(at) => {
            let at = at.with_timezone(&Utc);
            format!(
                "<time datetime=\"{}\">{}</time>",
                attr(rfc3339),
                at.format("%Y-%m-%d %H:%M UTC")
            )
        }
        Err(_) => text(rfc3339).to_string(),
    }
}

/// How long ago `rfc3339` was at `now` (`5 min`, `3 h`, `2 d`).
pub fn age(rfc3339: &str, now: DateTime<Utc>) -> String {
    let Ok(at) = DateTime::parse_from_rfc3339(rfc3339) else {
        return String::new();
    };
    let minutes = now.signed_duration_since(at.with_timezone(&Utc)).num_minutes();
    match minutes {
        m if m < 1 => "just now".to_owned(),
        m if m < 60 => format!("{m} min ago"),
        m if m < 48 * 60 => format!("{} h ago", m / 60),
        m => format!("{} d ago", m / (24 * 60)),
    }
}

/// A notice box (`info`, `warn`, `error`) with escaped `message`.
pub fn notice(kind: &str, message: &str) -> String {
    format!(
        "<p class=\"notice notice-{kind}\" role=\"{}\">{}</p>",
        if kind == "error" { "alert" } else { "status" },
        text(message)
    )
}

/// Pretty JSON of stored arguments, or the text itself when it is not JSON.
pub fn arguments(stored: &str) -> String {
    serde_json::from_str::<serde_json::Value>(stored)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| stored.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_from_storage_is_shown_as_text() {
        assert_eq!(
            text("<script>alert('x')</script> & co").to_string(),
            "&lt;script&gt;alert('x')&lt;/script&gt; &amp; co"
        );
        assert_eq!(
            attr("\"><img src=x onerror=1>").to_string(),
            "&#34;&gt;&lt;img src=x onerror=1&gt;"
        );
        assert_eq!(attr("it's").to_string(), "it&#39;s");
        assert_eq!(text("plain ünïcode").to_string(), "plain ünïcode");
    }

    #[test]
    fn amounts_are_grouped_with_their_currency() {
        assert_eq!(money("3336000.00", "IDR"), "3,336,000.00&nbsp;IDR");
        assert_eq!(money("288000.00", "IDR"), "288,000.00&nbsp;IDR");
        assert_eq!(money("-1200.50", "IDR"), "-1,200.50&nbsp;IDR");
        assert_eq!(money("12.00", "IDR"), "12.00&nbsp;IDR");
        assert_eq!(money("<b>", "IDR"), "&lt;b&gt; IDR");
    }

    #[test]
    fn ages_read_like_a_person_says_them() {
        let now = DateTime::parse_from_rfc3339("2026-11-29T09:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(age("2026-11-29T08:59:30.000Z", now), "just now");
        assert_eq!(age("2026-11-29T08:15:00.000Z", now), "45 min ago");
        assert_eq!(age("2026-11-28T09:00:00.000Z", now), "24 h ago");
        assert_eq!(age("2026-11-26T02:14:09.000Z", now), "3 d ago");
        assert_eq!(age("nonsense", now), "");
    }
}
