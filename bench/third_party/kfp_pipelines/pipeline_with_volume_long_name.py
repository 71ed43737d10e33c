# Copyright 2026 The Kubeflow Authors
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
"""Pipeline with a long name and CreatePVC to verify that pod name resolution
works correctly when pod names exceed the 63-character hostname limit."""
from kfp import dsl
from kfp import kubernetes


@dsl.component
def dummy_task():
    print('hello')


@dsl.pipeline(name='here-is-a-pipeline-very-long-name')
def pipeline_with_volume_long_name():
    dummy_task()

    pvc1 = kubernetes.CreatePVC(
        pvc_name_suffix='-my-pvc',
        access_modes=['ReadWriteOnce'],
        size='1Gi',
        storage_class_name='standard',
    )


if __name__ == '__main__':
    from kfp import compiler
    compiler.Compiler().compile(
        pipeline_func=pipeline_with_volume_long_name,
        package_path='pipeline_with_volume_long_name.yaml')
