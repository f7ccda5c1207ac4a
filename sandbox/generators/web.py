"""Web search results and scraped pages (markdown, HTML, text, links)."""

from html import escape
from urllib.parse import urlsplit

from sandbox.generators.words import SITES, TOPIC_WORDS, paragraph, sentence, slugify, title_case


def search_result(rng, query: str, index: int) -> dict:
    query = query or "sandbox search"
    site = rng.choice(SITES)
    topic = title_case(query)
    angle = rng.choice(("Guide", "Overview", "Explained", "Best practices", "FAQ", "News"))
    url = f"https://{site}/{slugify(query)}-{rng.choice(TOPIC_WORDS)}-{index + 1}"
    day = rng.randint(1, 28)
    return {
        "title": f"{topic}: {angle} | {site.removeprefix('www.')}",
        "url": url,
        "domain": site,
        "snippet": f"{topic} {sentence(rng, query)} {sentence(rng, query)}",
        "date": f"2025-{rng.randint(1, 12):02d}-{day:02d}",
        "position": index + 1,
        "score": round(max(0.05, 0.99 - index * 0.013 - rng.random() * 0.02), 4),
        "author": rng.choice(("Staff writer", "Editorial team", "Community", None)),
    }


def page(rng, url: str, prompt: str = "") -> dict:
    url = url or "https://example.com/"
    parts = urlsplit(url if "//" in url else f"https://{url}")
    host = parts.hostname or "example.com"
    topic = title_case(" ".join((parts.path or "").replace("-", " ").split("/"))) or title_case(
        host.split(".")[0]
    )
    title = f"{topic} - {host}"
    sections = [
        (title_case(rng.choice(TOPIC_WORDS) + " " + rng.choice(TOPIC_WORDS)), paragraph(rng, topic))
        for _ in range(rng.randint(2, 4))
    ]
    links = [f"https://{host}/{slugify(rng.choice(TOPIC_WORDS))}-{n}" for n in range(1, 6)]
    intro = paragraph(rng, topic + " " + prompt, 2)
    markdown = f"# {title}\n\n{intro}\n\n" + "\n\n".join(
        f"## {heading}\n\n{text}" for heading, text in sections
    )
    markdown += "\n\n" + "\n".join(f"- [{link.rsplit('/', 1)[-1]}]({link})" for link in links)
    html = (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}'
        f'</title><meta name="description" content="{escape(intro[:150])}"></head><body>'
        f"<h1>{escape(title)}</h1><p>{escape(intro)}</p>"
        + "".join(f"<h2>{escape(h)}</h2><p>{escape(t)}</p>" for h, t in sections)
        + "<ul>"
        + "".join(f'<li><a href="{link}">{link.rsplit("/", 1)[-1]}</a></li>' for link in links)
        + "</ul></body></html>"
    )
    text = f"{title}\n\n{intro}\n\n" + "\n\n".join(f"{h}\n{t}" for h, t in sections)
    return {
        "url": url,
        "host": host,
        "title": title,
        "description": intro[:160],
        "markdown": markdown,
        "html": html,
        "text": text,
        "links": links,
        "language": "en",
        "status_code": 200,
    }


def site_urls(rng, url: str, count: int) -> list[str]:
    parts = urlsplit(url if "//" in url else f"https://{url}")
    root = f"{parts.scheme or 'https'}://{parts.hostname or 'example.com'}"
    sections = ("blog", "docs", "pricing", "about", "careers", "changelog", "guides", "customers")
    urls = [root + "/"]
    index = 0
    while len(urls) < count:
        section = sections[index % len(sections)]
        urls.append(f"{root}/{section}/{slugify(rng.choice(TOPIC_WORDS))}-{index + 1}")
        index += 1
    return urls[:count]
