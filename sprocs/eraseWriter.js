/**
 * Account erasure: removes one writer's comments and like from one post's partition, and moves
 * the post's commentCount and likeCount down by the live ones removed, in one transaction, so
 * the counts stay equal to the items at every moment. Removed means soft-deleted, as every
 * delete in the posts container (flag + ttl: reads stop serving them at once, Cosmos DB removes
 * them when the ttl runs out); the text and the name are dropped at once, also from the items
 * the writer removed before (an unliked like keeps its name until then otherwise); those count
 * for nothing, as they were counted out when removed.
 * Idempotent: items already marked and scrubbed are not selected again. Bounded: one page (`pageSize`) of
 * the writer's items per call; {continuation: ""} asks for another call. A write that is not
 * accepted throws, which rolls back the whole call (the items and the counts together): the
 * caller calls again with a smaller page.
 * Response body: {status: "erased", comments, likes, continuation}.
 *
 * @param {string} postId
 * @param {string} userId
 * @param {number} ttlSeconds
 * @param {number} pageSize
 */
function eraseWriter(postId, userId, ttlSeconds, pageSize) {
  var collection = getContext().getCollection();
  var response = getContext().getResponse();
  var NOT_ACCEPTED = "eraseWriter was not accepted; call again with a smaller page.";
  var query = {
    query:
      "SELECT TOP @pageSize * FROM c WHERE c.postId = @postId AND c.userId = @userId AND (c.type = @comment OR c.type = @like) " +
      "AND (NOT IS_DEFINED(c.deleted) OR IS_DEFINED(c.content) OR IS_DEFINED(c.userUsername) OR IS_DEFINED(c.traceparent))",
    parameters: [
      { name: "@pageSize", value: pageSize + 1 },
      { name: "@postId", value: postId },
      { name: "@userId", value: userId },
      { name: "@comment", value: "comment" },
      { name: "@like", value: "like" },
    ],
  };
  var erasedAt = new Date().toISOString();

  /** @param {boolean} accepted */
  function ensure(accepted) {
    if (!accepted) throw new Error(NOT_ACCEPTED);
  }

  ensure(
    collection.queryDocuments(collection.getSelfLink(), query, { pageSize: -1 }, function (err, found) {
      if (err) throw err;
      var items = /** @type {BlogItem[]} */ (found);
      var page = items.slice(0, pageSize);
      var more = items.length > pageSize;
      markAll(page, 0, 0, 0, more);
    }),
  );

  /** @param {BlogItem[]} page @param {number} index @param {number} comments @param {number} likes @param {boolean} more */
  function markAll(page, index, comments, likes, more) {
    if (index === page.length) return count(comments, likes, more);
    var item = page[index];
    var live = !item.deleted;
    if (live) {
      item.deleted = true;
      item.deletedDate = erasedAt;
      item.ttl = ttlSeconds;
    }
    // What the writer said and under which name goes now; the id and the writer's id leave with the ttl.
    delete item.content;
    delete item.userUsername;
    delete item.traceparent;
    ensure(
      collection.replaceDocument(item._self, item, { etag: item._etag }, function (err) {
        if (err) throw err;
        var counted = live ? 1 : 0;
        markAll(page, index + 1, comments + (item.type === "comment" ? counted : 0), likes + (item.type === "like" ? counted : 0), more);
      }),
    );
  }

  /** @param {number} comments @param {number} likes @param {boolean} more */
  function count(comments, likes, more) {
    var body = { status: "erased", comments: comments, likes: likes, continuation: more ? "" : null };
    if (comments === 0 && likes === 0) return response.setBody(body);
    ensure(
      collection.readDocument(collection.getAltLink() + "/docs/" + postId, {}, function (err, found) {
        if (err && err.number === 404) return response.setBody(body);
        if (err) throw err;
        var post = /** @type {BlogItem} */ (found);
        // A deleted post's counts are served by nobody: its items leave with it.
        if (post.type !== "post" || post.deleted) return response.setBody(body);
        post.commentCount = Math.max(0, (post.commentCount || 0) - comments);
        post.likeCount = Math.max(0, (post.likeCount || 0) - likes);
        delete post.traceparent; // not this call's trace: the change feed must not join it
        ensure(
          collection.replaceDocument(post._self, post, { etag: post._etag }, function (err) {
            if (err) throw err;
            response.setBody(body);
          }),
        );
      }),
    );
  }
}
