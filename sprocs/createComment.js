/**
 * C3: adds a comment to a post and increments the post's commentCount in one transaction,
 * so the count always equals the number of comments. Runs in the post's partition.
 * A comment id that exists already (a retry with the same Idempotency-Key) returns that
 * comment and changes nothing.
 * Response body: {status: "created" | "exists", comment} or {status: "postNotFound"}.
 *
 * @param {string} postId
 * @param {{id: string, userId: string, userUsername: string, content: string, creationDate: string, traceparent?: string}} comment
 */
function createComment(postId, comment) {
  var collection = getContext().getCollection();
  var response = getContext().getResponse();

  function ensure(/** @type {boolean} */ accepted) {
    // Four operations never exceed the budget; if they do, fail whole rather than half.
    if (!accepted) throw new Error("createComment was not accepted; retry the request.");
  }

  ensure(
    collection.readDocument(collection.getAltLink() + "/docs/" + postId, {}, function (err, found) {
      var post = /** @type {BlogItem} */ (found);
      if (err && err.number === 404) return response.setBody({ status: "postNotFound" });
      if (err) throw err;
      if (post.type !== "post" || post.deleted) return response.setBody({ status: "postNotFound" });

      var item = {
        id: comment.id,
        type: "comment",
        postId: postId,
        userId: comment.userId,
        userUsername: comment.userUsername,
        content: comment.content,
        creationDate: comment.creationDate,
        // The writing request's trace context (bookkeeping; undefined is not stored): the change feed batch the comment causes joins that trace.
        traceparent: typeof comment.traceparent === "string" ? comment.traceparent : undefined,
      };
      ensure(
        collection.createDocument(collection.getSelfLink(), item, {}, function (createErr, created) {
          if (createErr && createErr.number === 409) return returnExisting();
          if (createErr) throw createErr;
          post.commentCount = (post.commentCount || 0) + 1;
          delete post.traceparent; // not this request's trace: the change feed must not join it
          ensure(
            collection.replaceDocument(post._self, post, { etag: post._etag }, function (replaceErr) {
              if (replaceErr) throw replaceErr;
              response.setBody({ status: "created", comment: created });
            }),
          );
        }),
      );
    }),
  );

  function returnExisting() {
    ensure(
      collection.readDocument(collection.getAltLink() + "/docs/" + comment.id, {}, function (readErr, existing) {
        if (readErr) throw readErr;
        var found = /** @type {BlogItem} */ (existing);
        if (found.type !== "comment" || found.userId !== comment.userId) throw new Error("The comment id belongs to another item.");
        response.setBody({ status: "exists", comment: existing });
      }),
    );
  }
}
