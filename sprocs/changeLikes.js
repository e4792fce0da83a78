/**
 * C4 and unlike: applies a post's like changes in order, in one transaction, and moves likeCount
 * once by their net effect. The API sends together the changes that arrived while its previous
 * call for the same post ran (group commit), so a hot post pays for one read and one replace of
 * the post per call, not per like.
 *
 * A like's id is derived from the user ("like:<userId>"): a repeated like finds it and changes
 * nothing. An unlike soft-deletes it (flag + ttl, as every delete in the posts container); liking
 * again replaces the flagged like.
 *
 * Bounded by its input (the API sends at most LIKE_BATCH_MAX changes). One parameterized query
 * reads the post and the likes; then come the writes, the count last. A write that is not
 * accepted throws, which rolls back the whole call: the caller sends the changes again in
 * smaller calls.
 * Response body: {status: "postNotFound"} or {status: "applied", results: [...]}, one result per
 * change: {status: "created" | "exists", like} or {status: "deleted" | "likeNotFound"}.
 *
 * @param {string} postId
 * @param {Array<{userId: string, like: boolean, userUsername?: string, creationDate?: string, traceparent?: string}>} changes
 * @param {number} ttlSeconds
 */
function changeLikes(postId, changes, ttlSeconds) {
  var collection = getContext().getCollection();
  var response = getContext().getResponse();
  var NOT_ACCEPTED = "changeLikes was not accepted; send fewer changes.";
  var query = {
    query: "SELECT * FROM c WHERE c.id = @postId OR ARRAY_CONTAINS(@likeIds, c.id)",
    parameters: [
      { name: "@postId", value: postId },
      {
        name: "@likeIds",
        value: changes.map(function (change) {
          return "like:" + change.userId;
        }),
      },
    ],
  };

  if (
    !collection.queryDocuments(collection.getSelfLink(), query, { pageSize: -1 }, function (err, found) {
      if (err) throw err;
      var items = /** @type {BlogItem[]} */ (found);
      var post = items.filter(function (item) {
        return item.id === postId && item.type === "post";
      })[0];
      if (!post || post.deleted) return response.setBody({ status: "postNotFound" });
      /** @type {{[id: string]: BlogItem}} */
      var likes = {};
      items.forEach(function (item) {
        if (item.type === "like") likes[item.id] = item;
      });
      apply(post, likes, 0, 0, []);
    })
  )
    throw new Error(NOT_ACCEPTED);

  /**
   * Applies changes[index] over the likes as they stand after the earlier changes, then the next.
   * @param {BlogItem} post @param {{[id: string]: BlogItem}} likes @param {number} index
   * @param {number} delta the net count change so far @param {Array<{status: string, like?: BlogItem}>} results
   */
  function apply(post, likes, index, delta, results) {
    if (index === changes.length) return finish(post, delta, results);
    var change = changes[index];
    var id = "like:" + change.userId;
    var existing = likes[id];
    var live = existing !== undefined && !existing.deleted;
    /** @param {{status: string, like?: BlogItem}} result @param {number} step */
    function next(result, step) {
      results.push(result);
      apply(post, likes, index + 1, delta + step, results);
    }

    if (change.like && live) return next({ status: "exists", like: existing }, 0);
    if (!change.like && !live) return next({ status: "likeNotFound" }, 0);
    if (change.like) {
      // Each like carries its own request's trace context (bookkeeping; undefined is not stored), so the batch it causes joins or links that trace.
      var traceparent = typeof change.traceparent === "string" ? change.traceparent : undefined;
      var like = {
        id: id,
        type: "like",
        postId: postId,
        userId: change.userId,
        userUsername: change.userUsername,
        creationDate: change.creationDate,
        traceparent: traceparent,
      };
      ensure(
        collection.upsertDocument(collection.getSelfLink(), like, {}, function (err, created) {
          if (err) throw err;
          likes[id] = /** @type {BlogItem} */ (created);
          next({ status: "created", like: likes[id] }, 1);
        }),
      );
      return;
    }
    existing.deleted = true;
    existing.deletedDate = new Date().toISOString();
    if (typeof change.traceparent === "string") existing.traceparent = change.traceparent;
    else delete existing.traceparent;
    existing.ttl = ttlSeconds;
    ensure(
      collection.replaceDocument(existing._self, existing, { etag: existing._etag }, function (err, replaced) {
        if (err) throw err;
        likes[id] = /** @type {BlogItem} */ (replaced);
        next({ status: "deleted" }, -1);
      }),
    );
  }

  /** @param {BlogItem} post @param {number} delta @param {Array<{status: string, like?: BlogItem}>} results */
  function finish(post, delta, results) {
    var body = { status: "applied", results: results };
    if (delta === 0) return response.setBody(body);
    post.likeCount = Math.max(0, (post.likeCount || 0) + delta);
    delete post.traceparent; // not these requests' trace: the change feed must not join it
    ensure(
      collection.replaceDocument(post._self, post, { etag: post._etag }, function (err) {
        if (err) throw err;
        response.setBody(body);
      }),
    );
  }

  /** @param {boolean} accepted */
  function ensure(accepted) {
    if (!accepted) throw new Error(NOT_ACCEPTED);
  }
}
