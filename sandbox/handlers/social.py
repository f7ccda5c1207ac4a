"""Social-media APIs: X (Twitter) v2, Reddit, YouTube Data v3."""

from sandbox.call import Call
from sandbox.generators.social import (
    iso,
    reddit_comment,
    reddit_post,
    subreddit,
    timestamp,
    tweet,
    video_snippet,
    x_user,
    youtube_id,
    youtube_statistics,
)
from sandbox.generators.words import TOPIC_WORDS, sentence, title_case
from sandbox.handlers.common import listing
from sandbox.handlers.registry import handles
from sandbox.paging import cursor_token

# --- X (Twitter) -----------------------------------------------------------------------------


def _x_listing(call: Call, make, *, default_size: int = 10):
    page, data = listing(call, make, default_size=default_size)
    meta = {"result_count": len(data)}
    if data and "id" in data[0] and "username" not in data[0]:
        meta["newest_id"], meta["oldest_id"] = data[0]["id"], data[-1]["id"]
    if page.next_cursor:
        meta["next_token"] = page.next_cursor
    return {"data": data, "meta": meta}


def _with_author_expansion(call: Call, body: dict) -> dict:
    if "author_id" in call.text("expansions") and body.get("data"):
        authors = {
            item["author_id"]: x_user(call.rng(item["author_id"]), user_id=item["author_id"])
            for item in body["data"]
        }
        body["includes"] = {"users": list(authors.values())}
    return body


@handles("x-twitter", "GET", "/2/tweets/search/recent")
def x_search_recent(call: Call):
    query = call.text("query")
    body = _x_listing(call, lambda rng, index: tweet(rng, query, index))
    return _with_author_expansion(call, body)


@handles("x-twitter", "GET", "/2/users/{id}/tweets")
def x_user_tweets(call: Call):
    user_id = call.text("id")
    return _x_listing(call, lambda rng, index: tweet(rng, "", index, author_id=user_id))


@handles("x-twitter", "GET", "/2/users/{id}/mentions")
def x_user_mentions(call: Call):
    user_id = call.text("id")
    handle = x_user(call.rng("user"), user_id=user_id)["username"]

    def make(rng, index):
        item = tweet(rng, "", index)
        item["text"] = f"@{handle} {item['text']}"
        return item

    return _x_listing(call, make)


@handles("x-twitter", "GET", "/2/users/{id}/followers")
def x_followers(call: Call):
    return _x_listing(call, lambda rng, index: x_user(rng), default_size=100)


@handles("x-twitter", "GET", "/2/users/by/username/{username}")
def x_user_by_username(call: Call):
    return {"data": x_user(call.rng(), username=call.text("username"))}


@handles("x-twitter", "GET", "/2/users/by")
def x_users_by(call: Call):
    names = [name.strip().lstrip("@") for name in call.text("usernames").split(",") if name.strip()]
    return {"data": [x_user(call.rng(name), username=name) for name in names[:100]]}


@handles("x-twitter", "GET", "/2/tweets/{id}")
def x_tweet(call: Call):
    item = tweet(call.rng(), "", 0)
    item["id"] = call.text("id")
    return _with_author_expansion(call, {"data": item})


@handles("x-twitter", "GET", "/2/tweets")
def x_tweets(call: Call):
    ids = [value.strip() for value in call.text("ids").split(",") if value.strip()][:100]
    data = []
    for tweet_id in ids:
        item = tweet(call.rng(tweet_id), "", 0)
        item["id"] = tweet_id
        data.append(item)
    return {"data": data}


@handles("x-twitter", "GET", "/2/tweets/counts/recent")
def x_counts(call: Call):
    granularity = call.text("granularity", "hour")
    step = {"minute": 60, "hour": 3600, "day": 86400}[granularity]
    buckets = {"minute": 60, "hour": 168, "day": 7}[granularity]
    rng = call.rng()
    end = timestamp(rng, 0) // step * step
    data = [
        {
            "start": iso(end - (n + 1) * step),
            "end": iso(end - n * step),
            "tweet_count": rng.randint(0, 500),
        }
        for n in reversed(range(buckets))
    ]
    return {"data": data, "meta": {"total_tweet_count": sum(b["tweet_count"] for b in data)}}


# --- Reddit ----------------------------------------------------------------------------------


def _reddit_listing(call: Call, make, *, default_size: int = 25) -> dict:
    page, children = listing(call, make, default_size=default_size)
    return {
        "kind": "Listing",
        "data": {
            "after": f"t3_{page.next_cursor}" if page.next_cursor else None,
            "before": None,
            "dist": len(children),
            "modhash": "",
            "geo_filter": "",
            "children": children,
        },
    }


def _post_maker(call: Call, subreddit_name: str | None, query: str):
    def make(rng, index):
        name = subreddit_name or rng.choice(TOPIC_WORDS)
        # A post's id is the cursor that follows it, so "after" is the last post's fullname.
        return reddit_post(rng, name, query, index, cursor_token(call.set_seed, index + 1))

    return make


@handles("reddit", "GET", "/search")
def reddit_search(call: Call):
    kind = call.text("type", "link")
    query = call.text("q")
    if kind == "sr":
        return _reddit_listing(call, lambda rng, index: subreddit(rng))
    return _reddit_listing(call, _post_maker(call, None, query))


for _sort in ("hot", "new", "top"):

    @handles("reddit", "GET", f"/r/{{subreddit}}/{_sort}")
    def reddit_subreddit_listing(call: Call):
        return _reddit_listing(call, _post_maker(call, call.text("subreddit"), ""))


@handles("reddit", "GET", "/r/{subreddit}/comments/{article}")
def reddit_comments(call: Call):
    name, article = call.text("subreddit"), call.text("article")
    rng = call.rng()
    post = reddit_post(rng, name, "", 0, article)
    limit = min(int(call.get("limit") or 20), 500)
    comments = [reddit_comment(call.rng(index), name, article, index, 0) for index in range(limit)]
    return [_plain_listing([post]), _plain_listing(comments)]


def _plain_listing(children: list) -> dict:
    return {
        "kind": "Listing",
        "data": {"after": None, "before": None, "dist": len(children), "children": children},
    }


@handles("reddit", "GET", "/r/{subreddit}/about")
def reddit_about(call: Call):
    return subreddit(call.rng(), call.text("subreddit"))


@handles("reddit", "GET", "/user/{username}/about")
def reddit_user(call: Call):
    rng = call.rng()
    name = call.text("username")
    return {
        "kind": "t2",
        "data": {
            "id": f"{rng.randint(10**6, 10**7):x}",
            "name": name,
            "created_utc": float(timestamp(rng, 20000)),
            "link_karma": rng.randint(0, 90000),
            "comment_karma": rng.randint(0, 200000),
            "total_karma": rng.randint(0, 290000),
            "is_gold": False,
            "is_mod": rng.random() < 0.1,
            "verified": True,
            "has_verified_email": True,
            "icon_img": "https://www.redditstatic.com/avatars/defaults/v2/avatar_default_1.png",
        },
    }


@handles("reddit", "GET", "/user/{username}/submitted")
def reddit_user_submitted(call: Call):
    author = call.text("username")
    make = _post_maker(call, None, "")

    def by_author(rng, index):
        post = make(rng, index)
        post["data"]["author"] = author
        return post

    return _reddit_listing(call, by_author)


@handles("reddit", "GET", "/subreddits/search")
def reddit_subreddits(call: Call):
    query = "".join(call.text("q").split()).lower()
    return _reddit_listing(
        call,
        lambda rng, index: subreddit(
            rng, f"{query}{rng.choice(('', 'dev', 'news', 'help'))}{index or ''}"
        ),
    )


# --- YouTube ---------------------------------------------------------------------------------


def _youtube_page(call: Call, kind: str, make, *, default_size: int = 5) -> dict:
    page, items = listing(call, make, default_size=default_size)
    body = {
        "kind": f"youtube#{kind}ListResponse",
        "etag": cursor_token(call.seed, 0),
        "regionCode": call.text("regionCode", "US"),
        "pageInfo": {"totalResults": page.total, "resultsPerPage": page.size},
        "items": items,
    }
    if page.next_cursor:
        body["nextPageToken"] = page.next_cursor
    if page.offset:
        body["prevPageToken"] = cursor_token(call.set_seed, max(0, page.offset - page.size))
    return body


@handles("youtube", "GET", "/youtube/v3/search")
def youtube_search(call: Call):
    query = call.text("q")
    types = [t.strip() for t in call.text("type", "video,channel,playlist").split(",") if t.strip()]

    def make(rng, index):
        kind = types[0] if len(types) == 1 else rng.choice(types * 3 + ["video"] * 6)
        identifier = {"kind": f"youtube#{kind}"}
        key = {"video": "videoId", "channel": "channelId", "playlist": "playlistId"}.get(
            kind, "videoId"
        )
        identifier[key] = (
            ("UC" + youtube_id(rng, 22))
            if kind == "channel"
            else ("PL" + youtube_id(rng, 32))
            if kind == "playlist"
            else youtube_id(rng)
        )
        return {
            "kind": "youtube#searchResult",
            "etag": youtube_id(rng, 27),
            "id": identifier,
            "snippet": video_snippet(rng, query, index, call.text("channelId") or None),
        }

    return _youtube_page(call, "search", make)


def _video(rng, video_id: str, index: int, parts: str) -> dict:
    item = {"kind": "youtube#video", "etag": youtube_id(rng, 27), "id": video_id}
    if "snippet" in parts:
        item["snippet"] = video_snippet(rng, "", index)
    if "contentDetails" in parts:
        item["contentDetails"] = {
            "duration": f"PT{rng.randint(1, 59)}M{rng.randint(0, 59)}S",
            "dimension": "2d",
            "definition": "hd",
            "caption": "false",
            "licensedContent": True,
        }
    if "statistics" in parts:
        item["statistics"] = youtube_statistics(rng)
    return item


@handles("youtube", "GET", "/youtube/v3/videos")
def youtube_videos(call: Call):
    parts = call.text("part")
    ids = [value for value in call.text("id").split(",") if value]
    if ids:
        items = [
            _video(call.rng(video_id), video_id, n, parts) for n, video_id in enumerate(ids[:50])
        ]
        return {
            "kind": "youtube#videoListResponse",
            "etag": cursor_token(call.seed, 0),
            "items": items,
            "pageInfo": {"totalResults": len(items), "resultsPerPage": len(items)},
        }
    return _youtube_page(
        call, "video", lambda rng, index: _video(rng, youtube_id(rng), index, parts), default_size=5
    )


@handles("youtube", "GET", "/youtube/v3/channels")
def youtube_channels(call: Call):
    parts = call.text("part")
    ids = [value for value in call.text("id").split(",") if value] or [
        "UC" + youtube_id(call.rng("channel"), 22)
    ]
    handle = call.text("forHandle") or call.text("forUsername")
    items = []
    for channel_id in ids:
        rng = call.rng(channel_id)
        item = {"kind": "youtube#channel", "etag": youtube_id(rng, 27), "id": channel_id}
        if "snippet" in parts:
            title = (
                title_case(handle.lstrip("@"))
                if handle
                else title_case(f"{rng.choice(TOPIC_WORDS)} {rng.choice(TOPIC_WORDS)}")
            )
            item["snippet"] = {
                "title": title,
                "description": sentence(rng, title),
                "customUrl": handle or f"@{title.replace(' ', '').lower()}",
                "publishedAt": iso(timestamp(rng, 30000))[:19] + "Z",
                "country": "US",
            }
        if "statistics" in parts:
            item["statistics"] = {
                "viewCount": str(rng.randint(10**4, 10**9)),
                "subscriberCount": str(rng.randint(100, 10**7)),
                "hiddenSubscriberCount": False,
                "videoCount": str(rng.randint(5, 3000)),
            }
        if "contentDetails" in parts:
            item["contentDetails"] = {
                "relatedPlaylists": {"likes": "", "uploads": "UU" + channel_id[2:]}
            }
        items.append(item)
    return {
        "kind": "youtube#channelListResponse",
        "etag": cursor_token(call.seed, 0),
        "pageInfo": {"totalResults": len(items), "resultsPerPage": 5},
        "items": items,
    }


@handles("youtube", "GET", "/youtube/v3/commentThreads")
def youtube_comments(call: Call):
    video_id = call.text("videoId") or youtube_id(call.rng("video"))
    terms = call.text("searchTerms")

    def make(rng, index):
        author = title_case(f"{rng.choice(TOPIC_WORDS)} {rng.choice(TOPIC_WORDS)}")
        text = (terms + " " if terms else "") + sentence(rng, terms)
        published = iso(timestamp(rng, index * 3))[:19] + "Z"
        comment = {
            "kind": "youtube#comment",
            "id": youtube_id(rng, 26),
            "snippet": {
                "videoId": video_id,
                "textDisplay": text,
                "textOriginal": text,
                "authorDisplayName": f"@{author.replace(' ', '')}",
                "likeCount": rng.randint(0, 4000),
                "publishedAt": published,
                "updatedAt": published,
            },
        }
        return {
            "kind": "youtube#commentThread",
            "etag": youtube_id(rng, 27),
            "id": comment["id"],
            "snippet": {
                "channelId": "UC" + youtube_id(rng, 22),
                "videoId": video_id,
                "topLevelComment": comment,
                "canReply": True,
                "totalReplyCount": rng.randint(0, 30),
                "isPublic": True,
            },
        }

    return _youtube_page(call, "commentThread", make, default_size=20)


@handles("youtube", "GET", "/youtube/v3/playlistItems")
def youtube_playlist_items(call: Call):
    playlist_id = call.text("playlistId")

    def make(rng, index):
        video_id = youtube_id(rng)
        snippet = video_snippet(rng, "", index)
        snippet.update(
            playlistId=playlist_id,
            position=index,
            resourceId={"kind": "youtube#video", "videoId": video_id},
        )
        return {
            "kind": "youtube#playlistItem",
            "etag": youtube_id(rng, 27),
            "id": youtube_id(rng, 40),
            "snippet": snippet,
            "contentDetails": {"videoId": video_id, "videoPublishedAt": snippet["publishedAt"]},
        }

    return _youtube_page(call, "playlistItem", make)


@handles("youtube", "GET", "/youtube/v3/videoCategories")
def youtube_categories(call: Call):
    names = {
        "1": "Film & Animation",
        "2": "Autos & Vehicles",
        "10": "Music",
        "17": "Sports",
        "20": "Gaming",
        "22": "People & Blogs",
        "24": "Entertainment",
        "25": "News & Politics",
        "27": "Education",
        "28": "Science & Technology",
    }
    return {
        "kind": "youtube#videoCategoryListResponse",
        "etag": cursor_token(call.seed, 0),
        "items": [
            {
                "kind": "youtube#videoCategory",
                "etag": f"cat{key}",
                "id": key,
                "snippet": {
                    "title": title,
                    "assignable": True,
                    "channelId": "UCBR8-60-B28hp2BmDPdntcQ",
                },
            }
            for key, title in names.items()
        ],
    }
