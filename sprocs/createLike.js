/**
 * C4: records that a user likes a post and increments likeCount, in one transaction.
 * A like's id is derived from the user ("like:<userId>"), so a repeat finds the existing
 * like and changes nothing. Response body: {status: "created" | "exists", like} or {status: "postNotFound"}.
 *
 * @param {string} postId
 * @param {{userId: string, userUsername: string, creationDate: string}} like
 */
function createLike(postId, like) {
  var collection = getContext().getCollection();
  var response = getContext().getResponse();
  var likeId = "like:" + like.userId;

  function ensure(/** @type {boolean} */ accepted) {
    if (!accepted) throw new Error("createLike was not accepted; retry the request.");
  }

  ensure(collection.readDocument(collection.getAltLink() + "/docs/" + postId, {}, function (err, found) {
    var post = /** @type {BlogItem} */ (found);
    if (err && err.number === 404) return response.setBody({ status: "postNotFound" });
    if (err) throw err;
    if (post.type !== "post" || post.deleted) return response.setBody({ status: "postNotFound" });

    ensure(collection.readDocument(collection.getAltLink() + "/docs/" + likeId, {}, function (readErr, existing) {
      if (!readErr && !(/** @type {BlogItem} */ (existing)).deleted) return response.setBody({ status: "exists", like: existing });
      if (readErr && readErr.number !== 404) throw readErr;

      post.likeCount = (post.likeCount || 0) + 1;
      ensure(collection.replaceDocument(post._self, post, { etag: post._etag }, function (replaceErr) {
        if (replaceErr) throw replaceErr;
        var item = {
          id: likeId,
          type: "like",
          postId: postId,
          userId: like.userId,
          userUsername: like.userUsername,
          creationDate: like.creationDate
        };
        ensure(collection.upsertDocument(collection.getSelfLink(), item, {}, function (createErr, created) {
          if (createErr) throw createErr;
          response.setBody({ status: "created", like: created });
        }));
      }));
    }));
  }));
}
