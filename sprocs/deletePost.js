/**
 * Soft-deletes a post and everything in its partition: sets `deleted: true` and a `ttl`, so
 * reads stop serving the items at once, the change feed still carries the post (deletes would
 * not appear there) and Cosmos DB removes the items when the ttl expires. The post is marked
 * first, so every list of the post stops being served with that one write. Idempotent: a post
 * already marked has its remaining items marked. The query selects only unmarked items and is
 * re-run from the start each page (marked items drop out). Bounded: when the server stops
 * accepting operations it returns a continuation ("" = call again).
 * With `ifMatch` (the client's If-Match, resolved to the ETag it names), the post is marked only
 * if it is still that version, in the same transaction as the check.
 * Response body: {status: "deleted", continuation, marked}, {status: "postNotFound"} or {status: "preconditionFailed"};
 * `marked` says this call marked the post (committed with the marking: a call that fails marks
 * nothing), so a caller can count a post it deleted, once, whoever else tries at the same time.
 *
 * @param {string} postId
 * @param {number} ttlSeconds
 * @param {string | null} [continuation]
 * @param {string | null} [ifMatch]
 */
function deletePost(postId, ttlSeconds, continuation, ifMatch) {
  var collection = getContext().getCollection();
  var response = getContext().getResponse();
  var pageSize = 100;
  var query = { query: "SELECT * FROM p WHERE p.postId = @postId AND NOT IS_DEFINED(p.deleted)", parameters: [{ name: "@postId", value: postId }] };
  var deletedAt = new Date().toISOString();
  var marked = false;

  function finish(/** @type {string | null} */ next) {
    response.setBody({ status: "deleted", continuation: next, marked: marked });
  }

  /** @param {BlogItem} doc */
  function markDeleted(doc) {
    doc.deleted = true;
    doc.deletedDate = deletedAt;
    doc.ttl = ttlSeconds;
    delete doc.traceparent; // not this request's trace: the change feed must not join it
    return collection.replaceDocument(doc._self, doc, {});
  }

  function drain() {
    var accepted = collection.queryDocuments(collection.getSelfLink(), query, { pageSize: pageSize }, function (err, docs) {
      if (err) throw err;
      for (var i = 0; i < docs.length; i++) {
        if (!markDeleted(/** @type {BlogItem} */ (docs[i]))) return finish("");
      }
      if (docs.length === pageSize) drain();
      else finish(null);
    });
    if (!accepted) finish("");
  }

  if (continuation !== null && continuation !== undefined) return drain();
  var accepted = collection.readDocument(collection.getAltLink() + "/docs/" + postId, {}, function (err, found) {
    var post = /** @type {BlogItem} */ (found);
    if (err && err.number === 404) return response.setBody({ status: "postNotFound" });
    if (err) throw err;
    if (post.type !== "post") return response.setBody({ status: "postNotFound" });
    if (ifMatch !== null && ifMatch !== undefined && (post.deleted || post._etag !== ifMatch)) return response.setBody({ status: "preconditionFailed" });
    if (!post.deleted) {
      if (!markDeleted(post)) throw new Error("deletePost was not accepted; retry the request.");
      marked = true;
    }
    drain();
  });
  if (!accepted) throw new Error("deletePost was not accepted; retry the request.");
}
