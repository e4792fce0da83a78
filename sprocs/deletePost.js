/**
 * Soft-deletes a post and everything in its partition: sets `deleted: true` and a `ttl`, so
 * reads stop serving the items at once, the change feed still carries the post (deletes would
 * not appear there) and Cosmos DB removes the items when the ttl expires. The post is marked
 * first. Bounded: returns a continuation when the server stops accepting operations.
 * Response body: {status: "deleted", continuation} or {status: "postNotFound"}.
 *
 * @param {string} postId
 * @param {number} ttlSeconds
 * @param {string | null} [continuation]
 */
function deletePost(postId, ttlSeconds, continuation) {
  var collection = getContext().getCollection();
  var response = getContext().getResponse();
  var query = { query: "SELECT * FROM p WHERE p.postId = @postId", parameters: [{ name: "@postId", value: postId }] };
  var deletedAt = new Date().toISOString();

  function finish(/** @type {string | null} */ next) {
    response.setBody({ status: "deleted", continuation: next });
  }

  /** @param {BlogItem} doc */
  function markDeleted(doc) {
    doc.deleted = true;
    doc.deletedDate = doc.deletedDate || deletedAt;
    doc.ttl = ttlSeconds;
    return collection.replaceDocument(doc._self, doc, {});
  }

  /** @param {string | undefined} pageToken */
  function processPage(pageToken) {
    var accepted = collection.queryDocuments(collection.getSelfLink(), query, { pageSize: 100, continuation: pageToken }, function (err, docs, options) {
      if (err) throw err;
      for (var i = 0; i < docs.length; i++) {
        var doc = /** @type {BlogItem} */ (docs[i]);
        if (doc.deleted) continue;
        if (!markDeleted(doc)) return finish(pageToken || "");
      }
      if (options.continuation) processPage(options.continuation);
      else finish(null);
    });
    if (!accepted) finish(pageToken || "");
  }

  if (continuation) return processPage(continuation);
  var accepted = collection.readDocument(collection.getAltLink() + "/docs/" + postId, {}, function (err, found) {
    var post = /** @type {BlogItem} */ (found);
    if (err && err.number === 404) return response.setBody({ status: "postNotFound" });
    if (err) throw err;
    if (post.type !== "post") return response.setBody({ status: "postNotFound" });
    if (!post.deleted && !markDeleted(post)) throw new Error("deletePost was not accepted; retry the request.");
    processPage(undefined);
  });
  if (!accepted) throw new Error("deletePost was not accepted; retry the request.");
}
