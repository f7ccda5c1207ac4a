"""Posts, users, videos and communities for the social-media APIs."""

from sandbox.generators.words import (
    CITIES,
    FIRST_NAMES,
    LAST_NAMES,
    TOPIC_WORDS,
    sentence,
    slugify,
    title_case,
)

# Timestamps are drawn from a fixed window, never from the clock, so answers stay deterministic.
EPOCH_2025 = 1735689600


def timestamp(rng, newest_first_index: int = 0) -> int:
    return EPOCH_2025 + 300 * 86400 - newest_first_index * 3600 - rng.randint(0, 3599)


def iso(seconds: int) -> str:
    import datetime

    return (
        datetime.datetime.fromtimestamp(seconds, tz=datetime.UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def snowflake(rng, seconds: int) -> str:
    # X ids are snowflakes: milliseconds since 2010-11-04 shifted left by 22 bits.
    return str(((seconds * 1000 - 1288834974657) << 22) + rng.randint(0, (1 << 22) - 1))


def handle(rng) -> tuple[str, str]:
    first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
    return f"{first} {last}", f"{first.lower()}{last.lower()[:4]}{rng.randint(1, 999)}"


def x_user(rng, username: str | None = None, user_id: str | None = None) -> dict:
    name, generated = handle(rng)
    username = username or generated
    city = rng.choice(CITIES)
    created = EPOCH_2025 - rng.randint(200, 4000) * 86400
    return {
        "id": user_id or str(rng.randint(10**9, 10**18)),
        "name": name if username == generated else title_case(username) or name,
        "username": username,
        "created_at": iso(created),
        "description": sentence(rng, "", 10),
        "location": f"{city[0]}, {city[3]}",
        "verified": rng.random() < 0.1,
        "protected": False,
        "profile_image_url": "https://pbs.twimg.com/profile_images/"
        f"{rng.randint(10**17, 10**18)}/avatar_normal.jpg",
        "public_metrics": {
            "followers_count": rng.randint(10, 250_000),
            "following_count": rng.randint(10, 3000),
            "tweet_count": rng.randint(50, 60_000),
            "listed_count": rng.randint(0, 900),
            "like_count": rng.randint(0, 90_000),
        },
    }


def tweet(rng, query: str, index: int, author_id: str | None = None) -> dict:
    seconds = timestamp(rng, index)
    words = [word for word in query.split() if not word.startswith(("-", "lang:", "from:"))]
    text = sentence(rng, " ".join(words), rng.randint(8, 20)).rstrip(".")
    if words and rng.random() < 0.6:
        text = f"{text} #{slugify(words[0]).replace('-', '')}"
    return {
        "id": snowflake(rng, seconds),
        "text": text,
        "author_id": author_id or str(rng.randint(10**9, 10**18)),
        "created_at": iso(seconds),
        "lang": "en",
        "edit_history_tweet_ids": [],
        "public_metrics": {
            "retweet_count": rng.randint(0, 400),
            "reply_count": rng.randint(0, 90),
            "like_count": rng.randint(0, 3000),
            "quote_count": rng.randint(0, 40),
            "impression_count": rng.randint(100, 90_000),
        },
    }


def reddit_post(rng, subreddit: str, query: str, index: int, post_id: str) -> dict:
    seconds = timestamp(rng, index)
    title = title_case(sentence(rng, query, rng.randint(5, 11)).rstrip("."))
    author = handle(rng)[1]
    permalink = f"/r/{subreddit}/comments/{post_id}/{slugify(title)[:50]}/"
    return {
        "kind": "t3",
        "data": {
            "id": post_id,
            "name": f"t3_{post_id}",
            "subreddit": subreddit,
            "subreddit_name_prefixed": f"r/{subreddit}",
            "title": title,
            "selftext": sentence(rng, query) + " " + sentence(rng, query),
            "author": author,
            "score": rng.randint(1, 25_000),
            "ups": rng.randint(1, 25_000),
            "upvote_ratio": round(rng.uniform(0.6, 0.99), 2),
            "num_comments": rng.randint(0, 1800),
            "created_utc": float(seconds),
            "permalink": permalink,
            "url": f"https://www.reddit.com{permalink}",
            "is_self": True,
            "over_18": False,
            "stickied": False,
        },
    }


def reddit_comment(rng, subreddit: str, post_id: str, index: int, depth: int) -> dict:
    comment_id = f"k{index:x}{rng.randint(1000, 9999):x}"
    return {
        "kind": "t1",
        "data": {
            "id": comment_id,
            "name": f"t1_{comment_id}",
            "author": handle(rng)[1],
            "body": sentence(rng, ""),
            "score": rng.randint(-5, 2000),
            "created_utc": float(timestamp(rng, index)),
            "link_id": f"t3_{post_id}",
            "subreddit": subreddit,
            "depth": depth,
            "replies": "",
        },
    }


def subreddit(rng, name: str | None = None) -> dict:
    name = name or f"{rng.choice(TOPIC_WORDS)}{rng.choice(('', 's', 'dev', 'hq'))}"
    created = EPOCH_2025 - rng.randint(300, 5000) * 86400
    return {
        "kind": "t5",
        "data": {
            "id": f"2{rng.randint(10**5, 10**6):x}",
            "name": f"t5_2{rng.randint(10**5, 10**6):x}",
            "display_name": name,
            "display_name_prefixed": f"r/{name}",
            "title": title_case(name),
            "public_description": sentence(rng, name),
            "subscribers": rng.randint(500, 3_000_000),
            "active_user_count": rng.randint(5, 9000),
            "created_utc": float(created),
            "over18": False,
            "url": f"/r/{name}/",
            "subreddit_type": "public",
        },
    }


def youtube_id(rng, length: int = 11) -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    return "".join(rng.choice(alphabet) for _ in range(length))


def video_snippet(rng, query: str, index: int, channel_id: str | None = None) -> dict:
    seconds = timestamp(rng, index * 6)
    title = title_case(sentence(rng, query, rng.randint(4, 9)).rstrip("."))
    channel_title = title_case(f"{rng.choice(TOPIC_WORDS)} {rng.choice(TOPIC_WORDS)}")
    return {
        "publishedAt": iso(seconds)[:19] + "Z",
        "channelId": channel_id or "UC" + youtube_id(rng, 22),
        "title": title,
        "description": sentence(rng, query),
        "channelTitle": channel_title,
        "thumbnails": {
            size: {
                "url": f"https://i.ytimg.com/vi/{youtube_id(rng)}/{size}.jpg",
                "width": w,
                "height": h,
            }
            for size, w, h in (("default", 120, 90), ("medium", 320, 180), ("high", 480, 360))
        },
        "liveBroadcastContent": "none",
    }


def youtube_statistics(rng) -> dict:
    views = rng.randint(100, 9_000_000)
    return {
        "viewCount": str(views),
        "likeCount": str(views // rng.randint(20, 80)),
        "favoriteCount": "0",
        "commentCount": str(views // rng.randint(200, 900)),
    }
