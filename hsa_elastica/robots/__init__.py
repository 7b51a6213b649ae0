"""robots"""
