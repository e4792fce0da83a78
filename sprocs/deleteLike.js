/**
 * Unlike: soft-deletes a user's like (flag + ttl, as every delete in the posts container) and
 * decrements likeCount, in one transaction. Liking again replaces the flagged like.
 * Response body: {status: "deleted"} or {status: "postNotFound" | "likeNotFound"}.
 *
 * @param {string} postId
 * @param {string} userId
 * @param {number} ttlSeconds
 */
function deleteLike(postId, userId, ttlSeconds) {
  var collection = getContext().getCollection();
  var response = getContext().getResponse();

  function ensure(/** @type {boolean} */ accepted) {
    if (!accepted) throw new Error("deleteLike was not accepted; retry the request.");
  }

  ensure(collection.readDocument(collection.getAltLink() + "/docs/" + postId, {}, function (err, found) {
    var post = /** @type {BlogItem} */ (found);
    if (err && err.number === 404) return response.setBody({ status: "postNotFound" });
    if (err) throw err;
    if (post.type !== "post" || post.deleted) return response.setBody({ status: "postNotFound" });

    ensure(collection.readDocument(collection.getAltLink() + "/docs/like:" + userId, {}, function (readErr, foundLike) {
      var like = /** @type {BlogItem} */ (foundLike);
      if (readErr && readErr.number === 404) return response.setBody({ status: "likeNotFound" });
      if (readErr) throw readErr;
      if (like.deleted) return response.setBody({ status: "likeNotFound" });

      like.deleted = true;
      like.deletedDate = new Date().toISOString();
      like.ttl = ttlSeconds;
      ensure(collection.replaceDocument(like._self, like, { etag: like._etag }, function (deleteErr) {
        if (deleteErr) throw deleteErr;
        post.likeCount = Math.max(0, (post.likeCount || 0) - 1);
        ensure(collection.replaceDocument(post._self, post, { etag: post._etag }, function (replaceErr) {
          if (replaceErr) throw replaceErr;
          response.setBody({ status: "deleted" });
        }));
      }));
    }));
  }));
}
