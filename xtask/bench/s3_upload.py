"""Uploads a local folder to an S3 server (moto), for the S3 benchmark.

    python s3_upload.py ENDPOINT BUCKET FOLDER PREFIX
"""
import os, sys, boto3
s3 = boto3.client("s3", endpoint_url=sys.argv[1], aws_access_key_id="test", aws_secret_access_key="test", region_name="us-east-1")
bucket, src, prefix = sys.argv[2], sys.argv[3], sys.argv[4]
try: s3.create_bucket(Bucket=bucket)
except Exception: pass
n=0
for root, _, files in os.walk(src):
    for f in files:
        p = os.path.join(root, f)
        s3.upload_file(p, bucket, prefix + "/" + os.path.relpath(p, src)); n+=1
print(n, "files")
